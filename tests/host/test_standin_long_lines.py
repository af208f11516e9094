"""Output lines over 64 KiB: the stand-in hangs on them as pulumi-command v1.2.1 does, and no host step prints one.

v1.2.1 reads a command's logged output with a bufio.Scanner at its default 64 KiB limit (provider/pkg/provider/util/
util.go:32-53); past a longer line nothing reads the pipe again and the run never returns (local/commandOutputs.go
L56-106). The host steps fold longer lines (lib.sh keep_lines_short); the runner passes them on as they come.
Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import json
import sys
import time

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2

from components.host.component import uploads
from components.host.step_runner import step_command
from engine.command_standin import processes
from tests.host.test_command_standin import LOCAL, check, create, urn
from tests.host.test_node_step import REPO, spec_for

MARK = "[line continued] "
LONG = 100 * 1024


def line_of(size: int) -> str:
    return f"head -c {size} /dev/zero | tr '\\0' x; echo"


def test_a_line_over_64_kib_hangs_the_command_after_it_ended_and_one_under_does_not(provider, tmp_path):
    """Simulates util.go:32-53: the command ends, yet the provider never answers (bounded here by a gRPC deadline;
    v1.2.1's Cancel would not end it either)."""
    _, made = create(provider, LOCAL, "short", {"create": line_of(processes.MAX_LINE - 1)})
    assert len(made.properties.fields["stdout"].string_value) == processes.MAX_LINE - 1
    ended = tmp_path / "ended"
    inputs = check(provider, LOCAL, "long", {"create": f"{line_of(processes.MAX_LINE)}; touch {ended}"})
    try:
        with pytest.raises(grpc.RpcError) as hung:
            provider.Create(provider_pb2.CreateRequest(urn=urn(LOCAL, "long"), properties=inputs), timeout=8)
        assert hung.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert ended.exists()
    finally:
        processes.release_stalls()


def install_through_the_standin(provider, node):
    """The install step as `pulumi up` runs it through the stand-in: the runner's local command, its environment
    and the key on stdin, in the project folder; the call bounded so a hang fails the test."""
    spec = spec_for(node)
    staging, upload = uploads(spec)
    command, environment = step_command(spec, spec.nodes[0], node.steps(spec)["install"], upload)
    inputs = check(provider, LOCAL, "install", {
        "create": command, "dir": str(REPO), "environment": {**environment, "ASCEND_NPU_PYTHON": sys.executable},
        "stdin": json.dumps({"key": spec.ssh_private_key}), "addPreviousOutputInEnv": False})
    return provider.Create(provider_pb2.CreateRequest(urn=urn(LOCAL, "install"), properties=inputs), timeout=120)


def test_an_installer_printing_a_100_kib_line_still_finishes_and_its_log_keeps_the_line(provider, node):
    node.knob("long-line", str(LONG))
    start = time.monotonic()
    made = install_through_the_standin(provider, node)
    assert time.monotonic() - start < 120
    assert "driver" in made.properties.fields["stdout"].string_value
    logged = node.path("/var/log/ascend-npu/driver.log").read_bytes().splitlines()
    assert max(len(line) for line in logged) >= LONG - 1


def test_a_failed_installers_100_kib_line_reaches_up_folded(provider, node):
    node.knob("long-line", str(LONG))
    node.knob("fail-driver", "1")
    with pytest.raises(grpc.RpcError) as failed:
        install_through_the_standin(provider, node)
    said = failed.value.details()
    assert failed.value.code() == grpc.StatusCode.UNKNOWN and "driver.log" in said
    header, *lines = said.encode().splitlines()  # `exit status 1: running "<the command>":`
    assert header.startswith(b"exit status 1: running ")
    assert max(len(line) for line in lines) <= 16384
    whole = max(node.path("/var/log/ascend-npu/driver.log").read_bytes().splitlines(), key=len)
    first = next(i for i, line in enumerate(lines) if whole.startswith(line) and line)
    pieces = [lines[first]]
    for line in lines[first + 1:]:
        if not line.startswith(MARK.encode()):
            break
        pieces.append(line[len(MARK):])
    assert b"".join(pieces) == whole and len(pieces) >= 6
