"""Serves this program to the Pulumi CLI (`pulumi up --client 127.0.0.1:PORT`) over the language runtime protocol.

The Python language host (`pulumi-language-python`, a Go module of its own) is not served by the module proxy,
so the CLI cannot start the program itself. The pulumi SDK carries a server of the same protocol, the one its
Automation API uses for inline programs (`pulumi.automation._server.LanguageServer`): this serves it, prints the
port on the first line, and serves until stopped. As the language host does, it runs the project folder's own
`__main__.py` with that folder first on sys.path (the repository's when the folder has none), from the module
frame of a script: the SDK records the call stack of every resource in the state (pulumi/runtime/resource.py
_get_stack_trace), and the language host's ends in its exec script's module frame and the event loop, not in a
server's methods or gRPC's worker threads.
"""
from __future__ import annotations

import asyncio
import contextvars
import cProfile
import logging
import os
import queue
import runpy
import signal
import sys
import traceback
from concurrent import futures
from contextlib import suppress
from pathlib import Path
from typing import Optional

import grpc
from pulumi import log
from pulumi.automation._server import LanguageServer
from pulumi.errors import RunError
from pulumi.runtime import reset_options, run_in_stack, set_all_config
from pulumi.runtime.proto import language_pb2, language_pb2_grpc

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


class QueuedServer(LanguageServer):
    """The SDK's server, each Run handed to the main thread (the queue) and its answer handed back."""

    def __init__(self, runs: queue.Queue):
        super().__init__(program)
        self.runs = runs

    def Run(self, request, context):  # noqa: N802 (the protocol's name)
        answer: queue.Queue = queue.Queue(maxsize=1)
        self.runs.put((request, answer))
        outcome, value = answer.get()
        if outcome == "raised":
            raise value
        return value


def start() -> tuple[QueuedServer, queue.Queue]:
    """Serve on a free loopback port, print it, stop on SIGTERM or SIGINT; the Runs arrive on the queue."""
    sys.path.insert(0, str(project_folder()))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    runs: queue.Queue = queue.Queue()
    language = QueuedServer(runs)
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(language, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)

    def stop(*_) -> None:
        server.stop(0)
        runs.put(None)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    return language, runs


def begin(request, language: LanguageServer) -> tuple[asyncio.AbstractEventLoop, asyncio.Task]:
    """The run's settings, config and loop, as the SDK's server sets them (automation/_server.py Run), and the
    program's task, in a context of its own."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    context = contextvars.copy_context()
    context.run(reset_options, project=request.project, monitor_address=request.monitor_address,
                engine_address=request.args[0] if request.args else "", stack=request.stack,
                parallel=request.parallel, preview=request.dryRun, organization=request.organization or "organization")
    if request.config:
        context.run(set_all_config, request.config, request.configSecretKeys or None)
    loop = asyncio.new_event_loop()
    loop.set_default_executor(futures.ThreadPoolExecutor(max_workers=max(request.parallel, 1) * 4))
    loop.set_exception_handler(language._exception_handler)
    return loop, loop.create_task(run_in_stack(program), context=context)


def finish(loop: asyncio.AbstractEventLoop, error: Optional[BaseException]) -> language_pb2.RunResponse:
    """The answer to the run, its error logged as the SDK's server logs it; the loop's leftover tasks cancelled."""
    message = ""
    if isinstance(error, RunError):
        message = str(error)
    elif isinstance(error, grpc.RpcError) and error.code() == grpc.StatusCode.UNAVAILABLE:
        log.debug("Resource monitor has terminated, shutting down.")
    elif isinstance(error, grpc.RpcError):
        message = f"RPC error: {error.details()}"
    elif error is not None:
        message = f"python inline source runtime error: {error}\n{''.join(traceback.format_exception(error))}"
    if message:
        log.error(message)
    for task in asyncio.all_tasks(loop):
        task.cancel()
        with suppress(asyncio.CancelledError):
            loop.run_until_complete(task)
    loop.close()
    run_process_ends()
    sys.stdout.flush()
    sys.stderr.flush()
    return language_pb2.RunResponse(error=message)


def run_process_ends() -> None:
    """What the end of the run's own process does under the language host, where this one lives on: the run's SSH
    agent, tied to that process (components/host/run_agent.py), stops."""
    agent = sys.modules.get("components.host.run_agent")
    if agent is not None:
        agent.stop()


if __name__ == "__main__":
    # Module-level, as the language host's exec script runs the program (pulumi sdk v3.274.0
    # python/cmd/pulumi-language-python-exec L231-232): the stack the SDK stores with each resource ends in this
    # one frame, not in a server's. Started as a script (`python engine/program_host.py`), not with -m, whose
    # runpy frames the exec script has neither.
    os.chdir(os.environ.get("ASCEND_NPU_PROGRAM_CWD", os.getcwd()))
    language, runs = start()
    profile = cProfile.Profile() if os.environ.get("ASCEND_NPU_PROFILE") else None
    while (job := runs.get()) is not None:
        request, answer = job
        failure: Optional[BaseException] = None
        try:
            loop, task = begin(request, language)
        except BaseException as error:  # noqa: BLE001 (handed to the gRPC thread, which raises it there)
            answer.put(("raised", error))
            continue
        if profile:
            profile.enable()
        try:
            loop.run_until_complete(task)
        except BaseException as error:  # noqa: BLE001 (answered as the SDK's server answers it)
            failure = error
        if profile:
            profile.disable()
            profile.dump_stats(os.environ["ASCEND_NPU_PROFILE"])
        try:
            answer.put(("returned", finish(loop, failure)))
        except BaseException as error:  # noqa: BLE001
            answer.put(("raised", error))
    sys.exit(0)
