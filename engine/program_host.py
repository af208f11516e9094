"""Serves this program to the Pulumi CLI (`pulumi up --client 127.0.0.1:PORT`) over the language runtime protocol.

The Python language host (`pulumi-language-python`, a Go module of its own) is not served by the module proxy,
so the CLI cannot start the program itself. The pulumi SDK carries a server of the same protocol, the one its
Automation API uses for inline programs (`pulumi.automation._server.LanguageServer`): this runs it, prints the port
on the first line, and serves until stopped. As the language host does, it runs the project folder's own
`__main__.py` with that folder first on sys.path (the repository's when the folder has none), and runs it on the
main thread: the SDK records the call stack of every resource in the state (pulumi/runtime/resource.py
_get_stack_trace), and the language host's is its exec script's module frame and the event loop
(sdk/python/cmd/pulumi-language-python-exec: `loop.run_until_complete(coro)`), not gRPC's worker threads.
"""
from __future__ import annotations

import cProfile
import os
import queue
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
    runpy.run_path(os.environ.get("ASCEND_NPU_PROGRAM") or str(project_folder() / "__main__.py"), run_name="__main__")
    extra = os.environ.get("ASCEND_NPU_EXTRA_RESOURCES")
    if extra:
        register_extra(Path(extra))


def project_folder() -> Path:
    """The folder whose program runs: the project's (the working directory) when it has one, else the repository."""
    return Path.cwd() if (Path.cwd() / "__main__.py").is_file() else REPO


def register_extra(path: Path) -> None:
    """Resources from a YAML file in `make plan --extra-resources`' form ({type, name, properties}, one or a list),
    registered beside the stack's own: how a test puts an object the pack must refuse in front of the engine."""
    import pulumi
    import yaml

    docs = yaml.safe_load(path.read_text())
    for doc in docs if isinstance(docs, list) else [docs]:
        pulumi.CustomResource(doc["type"], doc["name"], doc["properties"])


class MainThreadServer(LanguageServer):
    """The same server, each Run handed to the main thread (serve) and its answer handed back."""

    def __init__(self, program, runs: queue.Queue):
        super().__init__(program)
        self.runs = runs

    def Run(self, request, context):  # noqa: N802 (the protocol's name)
        answer: queue.Queue = queue.Queue(maxsize=1)
        self.runs.put((request, context, answer))
        outcome, value = answer.get()
        if outcome == "raised":
            raise value
        return value


def serve() -> int:
    """Serve on a free loopback port until SIGTERM or SIGINT, each Run on this (the main) thread, in turn; with
    ASCEND_NPU_PROFILE, profiled (cProfile) into that file: the bench's view of where the program's time goes."""
    sys.path.insert(0, str(project_folder()))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    runs: queue.Queue = queue.Queue()
    language = MainThreadServer(program, runs)
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(language, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)

    def stop(*_) -> None:
        server.stop(0)
        runs.put(None)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    profile = cProfile.Profile() if os.environ.get("ASCEND_NPU_PROFILE") else None
    while (job := runs.get()) is not None:
        request, context, answer = job
        if profile:
            profile.enable()
        try:
            answer.put(("returned", LanguageServer.Run(language, request, context)))
        except BaseException as error:  # noqa: BLE001 (handed to the gRPC thread, which raises it there)
            answer.put(("raised", error))
        finally:
            if profile:
                profile.disable()
                profile.dump_stats(os.environ["ASCEND_NPU_PROFILE"])
    return 0


if __name__ == "__main__":
    os.chdir(os.environ.get("ASCEND_NPU_PROGRAM_CWD", os.getcwd()))
    sys.exit(serve())
