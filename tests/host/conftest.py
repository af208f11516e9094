"""Fixtures of the host tests: the fake packages, a fresh fake Ascend node per test, a second sshd on it, the command
provider stand-in over gRPC."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

from engine.command_standin import server
from testkit.fakenode.node import SSHD, FakeNode, missing_requirements
from testkit.fakenode.packages import PackageSet, build_packages


@pytest.fixture(scope="session")
def packages(tmp_path_factory) -> PackageSet:
    return build_packages(tmp_path_factory.mktemp("packages"))


@pytest.fixture
def node(tmp_path: Path, packages: PackageSet):
    reason = missing_requirements()
    if reason:
        pytest.skip(reason)
    with FakeNode(tmp_path / "node", packages) as fake:
        yield fake


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def second_sshd(node, tmp_path):
    """The node's sshd config on another port (a second host, a bastion)."""
    port = free_port()
    config = tmp_path / "sshd_config_2"
    lines = [line for line in (node.ssh_dir / "sshd_config").read_text().splitlines() if not line.startswith("Port ")]
    config.write_text("\n".join([f"Port {port}", *lines, ""]))
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not listening(port):
        assert time.monotonic() < deadline and sshd.poll() is None, "second sshd did not start"
        time.sleep(0.05)
    yield port
    sshd.terminate()
    sshd.wait(timeout=10)


@pytest.fixture
def provider():
    """The pulumi-command stand-in over gRPC, configured as the engine configures it; the client takes a failure's
    whole text, as the engine (Go gRPC: 16 MB of metadata) does, where Python's gRPC stops at 16 KiB."""
    grpc_server, port = server.serve()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_metadata_size", 16 << 20)])
    stub = provider_pb2_grpc.ResourceProviderStub(channel)
    stub.Configure(provider_pb2.ConfigureRequest(acceptSecrets=True, sends_old_inputs=True,
                                                 sends_old_inputs_to_delete=True))
    yield stub
    channel.close()
    grpc_server.stop(None)
