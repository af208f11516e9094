"""The command stand-in's output lines reach the engine's Log service while the command runs, as pulumi-command
v1.2.1 sends them (local/commandOutputs.go run, util/util.go LogOutput): one status line each, in arrival order."""
from __future__ import annotations

import threading
import time
from concurrent import futures

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, provider_pb2, provider_pb2_grpc

from engine.command_standin import server
from tests.host.test_command_standin import LOCAL, create, urn


class RecordingEngine(engine_pb2_grpc.EngineServicer):
    """The engine's Log service, keeping each request with the time it came."""

    def __init__(self):
        self.logged: list[tuple[float, engine_pb2.LogRequest]] = []

    def Log(self, request, context):
        self.logged.append((time.monotonic(), request))
        return empty_pb2.Empty()

    def lines(self, name: str, token: str = LOCAL) -> list[str]:
        return [r.message for _, r in self.logged if r.urn == urn(token, name)]

    def when(self, message: str) -> float | None:
        return next((at for at, r in self.logged if r.message == message), None)


@pytest.fixture
def engine():
    recorder = RecordingEngine()
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    engine_pb2_grpc.add_EngineServicer_to_server(recorder, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    yield recorder, f"127.0.0.1:{port}"
    grpc_server.stop(None)


@pytest.fixture
def provider(engine):
    grpc_server, port = server.serve(engine[1])
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = provider_pb2_grpc.ResourceProviderStub(channel)
    stub.Configure(provider_pb2.ConfigureRequest(acceptSecrets=True))
    yield stub, engine[0]
    channel.close()
    grpc_server.stop(None)


def create_in_background(stub, token: str, name: str, props: dict) -> threading.Thread:
    worker = threading.Thread(target=create, args=(stub, token, name, props), daemon=True)
    worker.start()
    return worker


def first_line_comes_before_the_end(stub, recorder, token: str, name: str, props: dict, marker) -> None:
    worker = create_in_background(stub, token, name, props)
    deadline = time.monotonic() + 20
    while recorder.when("first") is None:
        assert time.monotonic() < deadline and worker.is_alive(), recorder.logged
        time.sleep(0.05)
    # The command is still in its sleep: its second line is not written yet and Create has not answered.
    assert worker.is_alive() and not marker.exists()
    worker.join(timeout=30)
    assert not worker.is_alive() and recorder.lines(name, token) == ["first", "second"]
    assert recorder.when("second") - recorder.when("first") >= 2
    assert all(r.severity == engine_pb2.INFO and r.ephemeral for _, r in recorder.logged)


def test_a_local_commands_first_line_is_logged_before_the_command_ends(provider, tmp_path):
    stub, recorder = provider
    marker = tmp_path / "second-written"
    first_line_comes_before_the_end(stub, recorder, LOCAL, "l",
                                    {"create": f"echo first; sleep 3; touch {marker}; echo second"}, marker)


def test_stdout_and_stderr_are_one_stream_of_lines_and_logging_chooses_the_streams(provider):
    """One pipe and one bufio.Scanner: a line may start on stdout and end on stderr; `\\r\\n` ends a line; the last
    line is logged without its newline; stdout and stderr outputs stay apart."""
    stub, recorder = provider
    command = ("printf 'out\\r\\n'; printf 'mixed '; sleep 0.5; printf 'line\\n' >&2; printf 'err\\n' >&2; sleep 0.5; "
               "printf tail")
    for name, logging, expected in (("both", None, ["out", "mixed line", "err", "tail"]),
                                    ("out", "stdout", ["out", "mixed tail"]), ("err", "stderr", ["line", "err"]),
                                    ("none", "none", [])):
        props = {"create": command, **({"logging": logging} if logging else {})}
        _, made = create(stub, LOCAL, name, props)
        assert recorder.lines(name) == expected, name
        outputs = made.properties.fields
        assert (outputs["stdout"].string_value, outputs["stderr"].string_value) == ("out\r\nmixed tail", "line\nerr")


def test_stdin_is_never_logged(provider):
    stub, recorder = provider
    secret_line = "deploy:Mirror-pass-7f3a"
    props = {"stdin": secret_line + "\n", "create": "read -r login; echo read ${#login}"}
    create(stub, LOCAL, "quiet", props)
    assert recorder.lines("quiet") == [f"read {len(secret_line)}"]
    assert not [r for _, r in recorder.logged if secret_line in r.message]
