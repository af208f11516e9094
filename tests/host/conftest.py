"""Fixtures of the host tests: the fake packages, a fresh fake Ascend node per test, a second sshd on it."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

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
    """The node's sshd config (which serves SFTP) on another port, also accepting PULUMI_COMMAND_* env requests."""
    port = free_port()
    config = tmp_path / "sshd_config_2"
    lines = [line for line in (node.ssh_dir / "sshd_config").read_text().splitlines() if not line.startswith("Port ")]
    config.write_text("\n".join([f"Port {port}", *lines, "AcceptEnv PULUMI_COMMAND_*", ""]))
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not listening(port):
        assert time.monotonic() < deadline and sshd.poll() is None, "second sshd did not start"
        time.sleep(0.05)
    yield port
    sshd.terminate()
    sshd.wait(timeout=10)
