"""The first ^C as pulumi-command v1.2.1 takes it (the engine's Cancel RPC), in the stand-in: a local command, which
every host step is, is killed (local/commandOutputs.go L59, L113), its children too (the runner's ssh dies with it).

Simulated: nothing but the engine, whose Cancel call the test makes itself.
"""
from __future__ import annotations

import threading
import time

import grpc
from google.protobuf import empty_pb2

from tests.host.test_command_standin import LOCAL, create


def in_background(call) -> dict:
    """Run CALL in a thread; the dict gets its result or its error."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["made"] = call()
        except grpc.RpcError as err:
            outcome["error"] = err
    outcome["thread"] = threading.Thread(target=run, daemon=True)
    outcome["thread"].start()
    return outcome


def test_a_local_command_is_killed_by_cancel(provider, tmp_path):
    marker = tmp_path / "started"
    running = in_background(lambda: create(provider, LOCAL, "drain", {"create": f"touch {marker}; exec sleep 60"}))
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    provider.Cancel(empty_pb2.Empty())
    running["thread"].join(30)
    assert not running["thread"].is_alive()
    assert running["error"].details().startswith(f'signal: killed: running "touch {marker}; exec sleep 60"')
