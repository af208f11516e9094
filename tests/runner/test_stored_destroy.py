"""The destroy each earlier release stored, replayed by today's code against a node today's steps installed: it
uninstalls what the node's record says; a destroy this release cannot resolve fails, touching nothing, and the
resource stays in the state.

A local `-destroy` (43e7d7f on) is replayed as pulumi-command v1.2.1 replays a delete: its stored line, environment and
stdin (provider/pkg/provider/local/commandController.go L93-99), through the command provider stand-in over gRPC
(engine/command_standin) in the project folder. The remote `-on-destroy` of the releases before held the node's
command itself, which v1.2.1 sends over SSH as stored (remote/commandController.go Delete): the same text 43e7d7f's
local destroy held, which today's runner parses and sends as stored. The stored lines name the fixture stacks'
node, port and pins (tests/runner/stored/record.py): they are pointed at the fake node, and at a real sshd bastion
for the stack behind one, and the sudo user's login becomes root (the fake node's one user; the sudo check's text
is checked in test_contract.py). Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2

from components.runner import agent
from components.runner.contract import ON_DESTROY
from components.runner.on_node import NodeCall
from components.runner.on_node import parse as parse_node
from testkit.fakenode.bastion import Bastion
from testkit.fakenode.node import FakeNode, missing_requirements
from tests.host.conftest import free_port
from tests.host.test_command_standin import secret, struct, urn
from tests.host.test_host_install import installed
from tests.host.test_node_step import REPO, run, spec_for
from tests.runner.stored import LOCAL_DESTROY, distinct, releases, resource
from tests.runner.test_contract import BASTION_PIN, PIN

LOCAL = "command:local:Command"
KINDS = ("driver", "firmware", "toolkit", "kernels", "dockerRuntime")
NAME = "fake-npu-01"


@pytest.fixture(scope="module")
def installed_once(tmp_path_factory, packages):
    """One fake node that today's steps installed and recorded, and a copy of its sandbox as they left it: each
    replay below starts from that copy (the installers' time spent once), on the same sshd."""
    reason = missing_requirements()
    if reason:
        pytest.skip(reason)
    with FakeNode(tmp_path_factory.mktemp("installed") / "node", packages) as fake:
        installed_and_recorded(fake)
        kept = fake.workdir / "installed-root"
        shutil.copytree(fake.root, kept, symlinks=True)
        yield fake, kept


@pytest.fixture
def installed_node(installed_once):
    """The installed node, its sandbox as the install left it."""
    fake, kept = installed_once
    shutil.rmtree(fake.root)
    shutil.copytree(kept, fake.root, symlinks=True)
    return fake


@pytest.fixture
def bastion(installed_node, tmp_path):
    node = installed_node
    with Bastion(tmp_path / "bastion", "127.0.0.9", free_port(), {"10.20.0.11": node.address},
                 node.ssh_dir / "authorized_keys") as jump:
        yield jump


def preinstalled(node) -> None:
    """A node with the stack's software and a destroy record in place, as far as a refusal can see: nothing of it
    may change."""
    node.preinstall({"firmware": "7.3.0.1.231", "driver": "24.1.rc2", "cann": "8.0.RC3", "dockerRuntime": "6.0.RC3"})
    record = node.path("/var/lib/ascend-npu/on-destroy.env")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(f"ASCEND_NODE={NAME}\nASCEND_ON_DESTROY=uninstall\n")


def installed_and_recorded(node, uninstall: bool = True):
    """Today's install and destroy record on the node, as an `up` of this release leaves it."""
    spec = spec_for(node, uninstall=uninstall)
    assert run(spec).returncode == 0
    assert run(spec, "on_destroy").returncode == 0
    assert all(installed(node, kind) for kind in KINDS)
    return spec


def aimed(line: str, node, bastion=None) -> str:
    """LINE pointed at the fake node (and BASTION), logging in as root."""
    line = line.replace("10.20.0.11:2222", f"127.0.0.1:{node.port}").replace("10.20.0.11:22", f"127.0.0.1:{node.port}")
    line = line.replace(shlex.quote(PIN), shlex.quote(node.host_key)).replace("--user deploy", "--user root")
    if bastion is not None:
        line = line.replace("bastion.example:22", f"{bastion.address}:{bastion.port}")
        line = line.replace("--bastion-user jump", "--bastion-user root")
        line = line.replace(shlex.quote(BASTION_PIN), shlex.quote(bastion.host_key))
    return line


def replay_delete(provider, stored: dict, environment: dict, stdin: str) -> None:
    """The provider's Delete of a local command with STORED's delete, ENVIRONMENT and STDIN, in the project folder."""
    state = {"delete": stored["delete"], "environment": environment, "addPreviousOutputInEnv": False,
             "stdout": "", "stderr": "", **({"stdin": secret(stdin)} if stdin else {})}
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        provider.Delete(provider_pb2.DeleteRequest(urn=urn(LOCAL, f"{NAME}-destroy"), id="x",
                                                   properties=struct(state), old_inputs=struct(state)))
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("commit, stack, stored", distinct("destroy", LOCAL_DESTROY),
                         ids=lambda value: value if isinstance(value, str) else "")
def test_the_local_destroy_each_release_stored_uninstalls_the_node(provider, installed_node, bastion, commit, stack,
                                                                   stored, monkeypatch):
    node = installed_node
    assert all(installed(node, kind) for kind in KINDS)
    spec = spec_for(node, uninstall=True)
    environment = {**stored.get("environment", {}), "ASCEND_NPU_PYTHON": sys.executable}
    key = spec.ssh_private_key
    with agent.holding(key) as socket_path:
        # A stack with useAgent replays its delete with the agent of the shell that runs `pulumi destroy`.
        monkeypatch.setenv(agent.AGENT_ENV, socket_path)
        stored = {**stored, "delete": aimed(stored["delete"], node, bastion if "bastion" in stack else None)}
        replay_delete(provider, stored, environment, json.dumps({"key": key}) if "stdin" in stored else "")
    assert [kind for kind in KINDS if installed(node, kind)] == []
    assert not node.path("/var/lib/ascend-npu/on-destroy.env").exists()
    if "bastion" in stack:
        assert (node.address, node.port) in bastion.forwards()


@pytest.mark.parametrize("commit, stack, stored", distinct("on-destroy", ("727ce57", "b3f3745", "b452938")),
                         ids=lambda value: value if isinstance(value, str) else "")
def test_the_remote_destroy_releases_before_stored_is_the_text_the_local_destroy_replayed_above_runs(commit, stack,
                                                                                                  stored):
    """The node's command of a remote delete (v1.2.1 sends it over SSH as stored), parsed by today's contract: the
    node's destroy, which today's runner sends byte for byte as stored, and which 43e7d7f's local destroy held in its
    environment: the replay of that one above runs this very text against the node."""
    found = parse_node(stored["delete"])
    user = "deploy" if "sudo" in stack else "root"
    assert found == NodeCall("run_destroy", node=NAME) and found.text(user, "destroy") == stored["delete"]
    local = resource(releases()["43e7d7f"], stack, "destroy")["environment"][ON_DESTROY]
    assert local == stored["delete"]


@pytest.mark.parametrize("held", [
    'bash -c "$ASCEND_NPU_RUN_WIPE" ascend-npu fake-npu-01',  # a runner name a later release might add
    "",  # the variable emptied
    'env ASCEND_NODE=fake-npu-01 bash -c "$ASCEND_NPU_RUN_STEP" ascend-npu install ' + "0" * 64,  # not a destroy
])
def test_a_stored_destroy_this_release_cannot_resolve_fails_touching_nothing_and_stays(provider, node, held):
    """Before contract 2 the runner sent such a text as stored: on the node `bash -c ""` exits 0, and the destroy
    dropped the node from the state with nothing uninstalled. Now the Delete fails, so the engine keeps the resource,
    and says what to do."""
    preinstalled(node)
    spec = spec_for(node)
    stored = resource(releases()["48a258d"], "sudo-key-bastion", "destroy")
    delete = aimed(stored["delete"], node).replace(" --bastion bastion.example:22 --bastion-user jump", "")
    delete = delete.replace(f" --bastion-host-key {shlex.quote(BASTION_PIN)}", "")
    before = node.path("/var/lib/ascend-npu/on-destroy.env").read_text()
    with pytest.raises(grpc.RpcError) as failed:
        replay_delete(provider, {"delete": delete}, {ON_DESTROY: held, "ASCEND_NPU_PYTHON": sys.executable},
                      json.dumps({"key": spec.ssh_private_key}))
    said = failed.value.details()
    assert "exit status 2" in said and "the destroy the state stored cannot be run by this release" in said
    assert "nothing on the node was changed and the node stays in the state" in said
    assert "`pulumi state delete` its `-destroy` resource" in said
    assert all(installed(node, kind) for kind in KINDS)
    assert node.path("/var/lib/ascend-npu/on-destroy.env").read_text() == before


def test_a_destroy_line_of_a_newer_contract_is_refused_without_dialing(node):
    preinstalled(node)
    line = (f"exec {shlex.quote(sys.executable)} -m components.runner destroy --contract 9 --node {NAME} "
            f"--address 127.0.0.1:{node.port} --user root --host-key {shlex.quote(node.host_key)}")
    done = subprocess.run(["/bin/sh", "-c", line], cwd=REPO, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "written in host runner contract 9, which this program (contract 2) does not know" in done.stderr
    assert "nothing was dialed" in done.stderr and all(installed(node, kind) for kind in KINDS)
