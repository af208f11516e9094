"""Serves this program to the Pulumi CLI (`pulumi up --client 127.0.0.1:PORT`) over the language runtime protocol.

The Python language host (`pulumi-language-python`, a Go module of its own) is not served by the module proxy,
so the CLI cannot start the program itself. The pulumi SDK carries a server of the same protocol, the one its
Automation API uses for inline programs (`pulumi.automation._server.LanguageServer`): this runs it with the
repository's `__main__.py` as the program, prints the port on the first line, and serves until stopped.
"""
from __future__ import annotations

import cProfile
import os
import runpy
import signal
import sys
from concurrent import futures
from pathlib import Path

import grpc
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
# The engine sends whole resource graphs; the CLI's own language host allows messages this large too.
MAX_MESSAGE = 400 * 1024 * 1024


def program() -> None:
    """The project's program (or the one ASCEND_NPU_PROGRAM names: the bench's bare program), run as `python
    __main__.py` would run it, then any extra resources."""
    runpy.run_path(os.environ.get("ASCEND_NPU_PROGRAM") or str(REPO / "__main__.py"), run_name="__main__")
    extra = os.environ.get("ASCEND_NPU_EXTRA_RESOURCES")
    if extra:
        register_extra(Path(extra))


def register_extra(path: Path) -> None:
    """Resources from a YAML file in `make plan --extra-resources`' form ({type, name, properties}, one or a list),
    registered beside the stack's own: how a test puts an object the pack must refuse in front of the engine."""
    import pulumi
    import yaml

    docs = yaml.safe_load(path.read_text())
    for doc in docs if isinstance(docs, list) else [docs]:
        pulumi.CustomResource(doc["type"], doc["name"], doc["properties"])


class ProfiledServer(LanguageServer):
    """The same server, the thread that runs the program and its event loop profiled (cProfile) into the file
    ASCEND_NPU_PROFILE names: the bench's view of where the program's time goes."""

    def Run(self, request, context):  # noqa: N802 (the protocol's name)
        profile = cProfile.Profile()
        profile.enable()
        try:
            return super().Run(request, context)
        finally:
            profile.disable()
            profile.dump_stats(os.environ["ASCEND_NPU_PROFILE"])


def serve() -> int:
    """Serve on a free loopback port until SIGTERM or SIGINT."""
    sys.path.insert(0, str(REPO))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    served = ProfiledServer if os.environ.get("ASCEND_NPU_PROFILE") else LanguageServer
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(served(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        server.stop(0)
    return 0


if __name__ == "__main__":
    os.chdir(os.environ.get("ASCEND_NPU_PROGRAM_CWD", os.getcwd()))
    sys.exit(serve())
