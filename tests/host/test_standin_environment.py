"""A remote `environment` entry sshd refuses fails the step before its command runs, as on pulumi-command v1.2.1
(provider/pkg/provider/remote/commandOutputs.go:42-49,110-126; x/crypto v0.48.0 ssh/session.go:167-177), and the
program sends no environment over SSH at all."""
from __future__ import annotations

import subprocess

import grpc
import pytest

from testkit.fakenode.node import SSHD
from testkit.fakenode.sshd import wait_listening
from tests.host.conftest import free_port
from tests.host.test_command_standin import COMMAND, conn, create
from tests.test_host_graph import graph  # noqa: F401 (a fixture)


def test_an_environment_entry_sshd_refuses_fails_the_step_before_it_runs(provider, node):
    marker = node.root / "ran"
    with pytest.raises(grpc.RpcError) as refused:
        create(provider, COMMAND, "env", {"connection": conn(node), "environment": {"ASCEND_X": "1"},
                                          "create": f"touch {marker}"})
    assert refused.value.details() == 'could not set environment variable "ASCEND_X": ssh: setenv failed'
    assert not marker.exists()


def test_an_environment_entry_acceptenv_allows_reaches_the_command(provider, node, tmp_path):
    port = free_port()
    kept = [line for line in (node.ssh_dir / "sshd_config").read_text().splitlines() if not line.startswith("Port ")]
    config, log = tmp_path / "sshd_config_env", tmp_path / "sshd_env.log"
    config.write_text("\n".join([f"Port {port}", *kept, "AcceptEnv ASCEND_*", ""]))
    with log.open("w") as out:
        sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=out, stderr=out)
    try:
        wait_listening(sshd, "127.0.0.1", port, log)
        _, made = create(provider, COMMAND, "env", {"connection": conn(node, port), "environment": {"ASCEND_X": "a b"},
                                                    "create": 'echo "got $ASCEND_X"'})
        assert made.properties.fields["stdout"].string_value == "got a b"
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)


def test_no_remote_step_sends_an_environment_or_its_previous_output(graph):  # noqa: F811
    _, resources, _ = graph
    remote = [r for r in resources.values() if r.type == COMMAND]
    assert remote and all(not r.properties.get("environment") for r in remote)
    assert all(r.properties.get("addPreviousOutputInEnv") is False for r in remote)
