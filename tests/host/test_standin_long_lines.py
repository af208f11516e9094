"""Output lines over 64 KiB: the stand-in hangs on them as pulumi-command v1.2.1 does, and no host step prints one.

v1.2.1 reads a command's logged output with a bufio.Scanner at its default 64 KiB limit (provider/pkg/provider/util/
util.go:32-53); past a longer line nothing reads the pipe again and session.Run never returns
(remote/commandOutputs.go:77-98). The host steps fold longer lines (lib.sh keep_lines_short)."""
from __future__ import annotations

import time

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2

from engine.command_standin import ssh
from testkit.fakenode.packages import NEW
from tests.host.test_command_standin import COMMAND, check, conn, create, urn

MARK = "[line continued] "
LONG = 100 * 1024


def line_of(size: int) -> str:
    return f"head -c {size} /dev/zero | tr '\\0' x; echo"


def test_a_line_over_64_kib_hangs_the_command_after_it_ended_and_one_under_does_not(provider, node):
    """Simulates util.go:32-53: the command ends on the node, yet the provider never answers (bounded here by a
    gRPC deadline; v1.2.1's Cancel would not end it either)."""
    _, made = create(provider, COMMAND, "short", {"connection": conn(node), "create": line_of(ssh.MAX_LINE - 1)})
    assert len(made.properties.fields["stdout"].string_value) == ssh.MAX_LINE - 1
    ended = node.root / "ended"
    inputs = check(provider, COMMAND, "long", {"connection": conn(node),
                                               "create": f"{line_of(ssh.MAX_LINE)}; touch {ended}"})
    try:
        with pytest.raises(grpc.RpcError) as hung:
            provider.Create(provider_pb2.CreateRequest(urn=urn(COMMAND, "long"), properties=inputs), timeout=8)
        assert hung.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert ended.exists()
    finally:
        ssh.release_stalls()


def install_through_the_standin(provider, node, spec):
    """The install step as `pulumi up` runs it through the stand-in; the call bounded so a hang fails the test."""
    node.stage(spec, "install")
    step = node.steps(spec)["install"]
    inputs = check(provider, COMMAND, "install", {"connection": conn(node), "create": step.create})
    return provider.Create(provider_pb2.CreateRequest(urn=urn(COMMAND, "install"), properties=inputs), timeout=120)


def test_an_installer_printing_a_100_kib_line_still_finishes_and_its_log_keeps_the_line(provider, node):
    node.knob("long-line", str(LONG))
    start = time.monotonic()
    made = install_through_the_standin(provider, node, node.spec())
    assert time.monotonic() - start < 120
    assert "driver" in made.properties.fields["stdout"].string_value
    logged = node.path("/var/log/ascend-npu/driver.log").read_bytes().splitlines()
    assert max(len(line) for line in logged) >= LONG - 1


def test_a_failed_installers_100_kib_line_reaches_up_folded(provider, node):
    node.knob("long-line", str(LONG))
    node.knob("fail-driver", "1")
    with pytest.raises(grpc.RpcError) as failed:
        install_through_the_standin(provider, node, node.spec(versions=NEW))
    said = failed.value.details()
    assert failed.value.code() == grpc.StatusCode.UNKNOWN and "driver.log" in said
    header, *lines = said.encode().splitlines()  # `Process exited with status 1: running "<the command>":`
    assert header.startswith(b"Process exited with status 1: running ")
    assert max(len(line) for line in lines) <= 16384
    whole = max(node.path("/var/log/ascend-npu/driver.log").read_bytes().splitlines(), key=len)
    first = next(i for i, line in enumerate(lines) if whole.startswith(line) and line)
    pieces = [lines[first]]
    for line in lines[first + 1:]:
        if not line.startswith(MARK.encode()):
            break
        pieces.append(line[len(MARK):])
    assert b"".join(pieces) == whole and len(pieces) >= 6
