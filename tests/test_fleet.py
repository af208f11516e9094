"""The fleet (testkit/fakenode/fleet.py): three nodes served by one process behind a real bastion, each step the real
runner local command run as tests/host/test_node_step.py runs it (`/bin/sh -c`, the component's environment and
stdin). Simulated: what the steps' installers and NPUs do (the fleet answers them); real: sshd, ssh, the staging."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from components.config import parse_stack
from components.host.commands import host_steps
from components.host.component import _verified, uploads
from components.host.step_runner import step_command
from testkit.fakenode.bastion import Bastion
from testkit.fakenode.fleet import SSHD, Fleet, fleet_address
from testkit.fakenode.packages import NEW, build_packages, stack_config

REPO = Path(__file__).resolve().parents[1]
BASTION = "127.63.0.1"
CHIPS = ("910B", "310P", "910B")


def missing() -> str | None:
    if os.geteuid() != 0:
        return "the fleet runs sshd and logs in as root: run as root (CI does)"
    for tool in (SSHD, "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} not found: apt-get install -y openssh-server openssh-client"
    return None


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    reason = missing()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("fleet")
    key = tmp / "client_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    with socket.socket() as probe:
        probe.bind((BASTION, 0))
        port = probe.getsockname()[1]
    with Fleet(tmp / "fleet", 3, key.with_suffix(".pub"), CHIPS) as fleet, \
            Bastion(tmp / "bastion", BASTION, port, {}, key.with_suffix(".pub")) as bastion:
        yield fleet, bastion, key.read_text(), build_packages(tmp / "packages")


def spec_of(world, index: int, address: str = ""):
    """A stack whose one node is the fleet's INDEX-th (or at ADDRESS), reached through the bastion, its installers
    uploaded."""
    fleet, bastion, key, packages = world
    raw = stack_config(packages, fleet.host_key)
    raw["ssh"] = {"user": "root", "port": fleet.port,
                  "bastion": {"host": bastion.address, "port": bastion.port, "hostKey": bastion.host_key}}
    raw["nodes"] = [{**raw["nodes"][0], "name": f"fleet-npu-{index}", "address": address or fleet.addresses[index],
                     "chip": CHIPS[index]}]
    return parse_stack(raw, private_key=key)


def run(spec, step: str) -> subprocess.CompletedProcess:
    """The step's local command as the provider runs it, the key on stdin."""
    staging, upload = uploads(spec)
    steps = host_steps(spec, spec.nodes[0], staging_dir=staging)
    command, environment = step_command(spec, spec.nodes[0], steps[step], upload if step == "install" else "")
    return subprocess.run(["/bin/sh", "-c", command], cwd=REPO, input=json.dumps({"key": spec.ssh_private_key}),
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **environment, "ASCEND_NPU_PYTHON": sys.executable})


def staged(fleet: Fleet, index: int) -> dict[str, tuple[int, int]]:
    """The node's staged files under /var/tmp: inode and mtime by path."""
    root = fleet.root(fleet.addresses[index])
    return {str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in (root / "var/tmp").rglob("*") if p.is_file()}


def test_install_stages_its_files_once_in_the_nodes_own_sandbox_through_the_bastion(world):
    fleet, bastion = world[0], world[1]
    spec = spec_of(world, 0)
    opened = fleet.opened
    done = run(spec, "install")
    assert done.returncode == 0, done.stderr
    assert "[install] fleet node " + fleet.addresses[0] in done.stdout and "no reboot needed" in done.stdout
    # One connection for the step: the hashes read, the files sent and the step share it (its ssh master).
    assert fleet.opened - opened == 1
    first = staged(fleet, 0)
    assert "var/tmp/ascend-npu-scripts/install.sh" in first
    assert any(path.startswith("var/tmp/packages/Ascend-hdk-910b-npu-driver_24.1.rc2") for path in first)
    assert staged(fleet, 1) == {} and fleet.steps(fleet.addresses[1]) == []
    assert (fleet.addresses[0], fleet.port) in bastion.forwards()
    opened = fleet.opened
    again = run(spec, "install")
    assert again.returncode == 0, again.stderr
    assert fleet.opened - opened == 1 and staged(fleet, 0) == first  # nothing sent, nothing touched
    assert fleet.steps(fleet.addresses[0]) == ["install", "install"]
    # The hops' VERBOSE lines are kept for a failure alone: nothing of them in a step's output, which the state keeps.
    for out in (done.stderr, again.stderr):
        assert "Authenticated to" not in out and "Killed by signal" not in out and "debug" not in out, out


# A Session in a process of its own, as the runner runs one: no gRPC in it. In a test worker that has run the SDK,
# gRPC's fork handlers can start its poller in a forked child, and its error line can reach the ssh log first.
DIAL = """
import json, sys
from components.runner import agent
from components.runner.contract import Endpoint
from components.runner.openssh import Session
node, bastion, key = json.loads(sys.stdin.read())
with agent.holding(key) as sock, Session(Endpoint(*node), Endpoint(*bastion), sock) as ssh:
    ran, streamed = ssh.run("true", 30), ssh.stream("true")
print(json.dumps([ran.said, streamed.said, ran.code, streamed.code]))
"""


def test_a_node_the_bastion_cannot_reach_fails_in_the_bastions_words(world):
    fleet, bastion, key = world[0], world[1], world[2]
    node = (fleet_address(249), fleet.port, "root", fleet.host_key)  # in the fleet's range, served by nothing
    given = json.dumps([node, (bastion.address, bastion.port, "root", bastion.host_key), key])
    done = subprocess.run([sys.executable, "-c", DIAL], cwd=REPO, input=given, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    ran_said, streamed_said, ran_code, streamed_code = json.loads(done.stdout)
    for said in (ran_said, streamed_said):  # one dial each, the hop's line each time
        assert said == "channel 0: open failed: connect failed: Connection refused", said
    assert ran_code == streamed_code == 255
    # The dial's own lines (the hop's, the master's) are the caller's to tell: nothing passed on.
    assert done.stderr == ""


@pytest.mark.parametrize("index", [1, 2])
def test_verify_reports_what_the_real_verify_prints(world, index):
    fleet = world[0]
    spec = spec_of(world, index)
    assert run(spec, "install").returncode == 0
    done = run(spec, "verify")
    assert done.returncode == 0, done.stderr
    report = _verified(done.stdout)
    name = "310P3" if CHIPS[index] == "310P" else "910B2"
    chips = [{"npu": c["npu"], "chip": c["chip"], "name": name, "health": "OK", "busId": c["busId"]}
             for c in report["chips"]]
    real = subprocess.run([sys.executable, str(REPO / "components/host/scripts/verify_report.py"),
                           "--node", f"fleet-npu-{index}", "--expected-chips", "8", "--reboot-pending", "false",
                           "--chips", json.dumps(chips), "--found", f"driver={NEW['driver']}",
                           "--found", f"firmware={NEW['firmware']}", "--found", f"toolkit={NEW['cann']}",
                           "--found", f"dockerRuntime=v{NEW['dockerRuntime']}"], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == real.stdout.splitlines()[-1]
    assert report["healthy"] and len(report["chips"]) == 8 and report["node"] == f"fleet-npu-{index}"
    assert len({(c["npu"], c["chip"]) for c in report["chips"]}) == 8
    assert fleet.steps(fleet.addresses[index]) == ["install", "verify"]
    assert sorted(Path(p).name for p in staged(fleet, index) if "scripts" in p) == ["install.sh", "verify.sh"]


def test_the_destroy_record_and_a_changed_staged_script_sent_again(world):
    fleet = world[0]
    spec = spec_of(world, 2)
    done = run(spec, "on_destroy")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[on-destroy] on destroy: keep the software (rollout.uninstallOnDestroy " \
                                           "is off)"
    assert run(spec, "verify").returncode == 0
    (fleet.root(fleet.addresses[2]) / "var/tmp/ascend-npu-scripts/verify.sh").write_text("changed\n")
    opened = fleet.opened
    assert run(spec, "verify").returncode == 0  # its hash is not the one the step names: sent again
    assert fleet.opened - opened == 1


SHARED = """
import json, os, sys
from components.runner import agent
from components.runner.contract import Endpoint
from components.runner.openssh import Session
node, bastion, key = json.loads(sys.stdin.read())
with agent.holding(key) as sock, Session(Endpoint(*node), Endpoint(*bastion), sock) as ssh:
    # The staging's own form (a command the fleet's nodes run as sent, staging.py's first words).
    answers = [ssh.run('r="${ASCEND_ROOT:-}"; echo %d' % i, 30) for i in range(3)]
    master, socket_path = ssh.master._proc, ssh.master.socket
    up = master is not None and master.poll() is None and socket_path.exists()
print(json.dumps([[a.code, a.out] for a in answers] + [up, master.poll() is not None, socket_path.exists()]))
"""


def test_a_sessions_commands_share_one_connection_that_ends_with_the_session(world):
    """In a process of its own, as the runner runs a Session (see DIAL)."""
    fleet, bastion, key = world[0], world[1], world[2]
    node = (fleet.addresses[0], fleet.port, "root", fleet.host_key)
    opened = fleet.opened
    given = json.dumps([node, (bastion.address, bastion.port, "root", bastion.host_key), key])
    done = subprocess.run([sys.executable, "-c", SHARED], cwd=REPO, input=given, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    *answers, up, ended, socket_left = json.loads(done.stdout)
    assert answers == [[0, "0\n"], [0, "1\n"], [0, "2\n"]] and up
    assert fleet.opened - opened == 1
    assert ended and not socket_left  # closed with the session


def test_a_folder_too_long_for_a_socket_dials_each_command_on_its_own(tmp_path):
    from components.runner.ssh_master import Master
    deep = tmp_path / ("d" * 120)
    master = Master(["ssh", "-p", "22", "root@node"], deep, {}, lambda: None)
    assert not master.usable and master.up() is None
    assert master.client(["ssh", "-p", "22", "root@node"]) == ["ssh", "-p", "22", "root@node"]
