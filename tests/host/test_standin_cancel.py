"""The first ^C as pulumi-command v1.2.1 takes it (the engine's Cancel RPC), in the stand-in: a remote command runs
to its end and is recorded, a local command is killed, a dial still retrying stops.

Simulated: nothing but the engine, whose Cancel call the test makes itself; the node is a real sshd.
"""
from __future__ import annotations

import threading
import time

import grpc
from google.protobuf import empty_pb2

from tests.host.conftest import free_port
from tests.host.test_command_standin import COMMAND, LOCAL, conn, create


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


def test_a_remote_command_outlives_cancel_and_its_result_is_recorded(provider, node):
    marker = node.root / "started"
    running = in_background(lambda: create(provider, COMMAND, "install", {
        "connection": conn(node), "create": f"touch {marker}; sleep 2; echo finished"}))
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    provider.Cancel(empty_pb2.Empty())
    running["thread"].join(60)
    assert "error" not in running, running.get("error")
    assert running["made"][1].properties.fields["stdout"].string_value == "finished"


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


def test_a_dial_still_retrying_stops_at_cancel(provider, node):
    closed = free_port()
    running = in_background(lambda: create(provider, COMMAND, "c", {
        "connection": conn(node, closed, dialErrorLimit=-1), "create": "true"}))
    time.sleep(1.0)
    provider.Cancel(empty_pb2.Empty())
    running["thread"].join(30)
    assert not running["thread"].is_alive()
    assert running["error"].details().endswith("failed attempts: context canceled")
