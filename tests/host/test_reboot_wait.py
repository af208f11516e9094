"""The reboot wait against a node that really goes away: OpenSSH from here, through a real sshd bastion, logged in
through an agent holding the stack's key as the run's agent does (and, in the form releases before contract 2
stored, with the key on stdin).

Simulated: the node's power (testkit/fakenode/power.py: its sshd stops, every process of it dies, it stays down, it
comes back with a new boot id and a driver that answers a few seconds later) and its NPUs. The bastion is Debian's
sshd, forwarding only; the node's name resolves on the bastion alone, so every dial goes through it.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from components.runner import agent
from components.runner.contract import MODULE, REBOOT_FROM, Endpoint, RunnerCall
from components.runner.openssh import PREFIX
from components.runner.reboot_wait import rebooted_from
from testkit.fakenode.bastion import Bastion
from tests.host.conftest import free_port

NAME = "npu-rb-01.nodes.test"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bastion(node, tmp_path):
    with Bastion(tmp_path / "bastion", "127.0.0.9", free_port(), {NAME: node.address},
                 node.ssh_dir / "authorized_keys") as jump:
        yield jump


@pytest.fixture
def key_agent(node):
    """An agent holding the stack's key, as the run's agent does during `pulumi up` (components/host/run_agent.py)."""
    with agent.holding((node.ssh_dir / "client_key").read_text()) as socket_path:
        yield socket_path


def waiter(node, bastion, before: str, sock: str = "", timeout: int = 60, host_key: str | None = None,
           legacy: bool = False) -> subprocess.Popen:
    """The wait as the stack's local command runs it (reboot_steps.wait_command): the run's agent at SOCK; LEGACY,
    the line releases before contract 2 stored, the key on stdin."""
    call = RunnerCall("reboot-wait", "npu-rb-01", Endpoint(NAME, node.port, "root", host_key or node.host_key),
                      Endpoint(bastion.address, bastion.port, "root", bastion.host_key), timeout=timeout)
    argv = [sys.executable, "-m", MODULE, *call.argv()]
    if legacy:
        argv = [sys.executable, "-m", "components.host.reboot_wait", "--node", "npu-rb-01", "--address",
                f"{NAME}:{node.port}", "--user", "root", "--host-key", host_key or node.host_key, "--timeout",
                str(timeout), "--bastion", f"{bastion.address}:{bastion.port}", "--bastion-user", "root",
                "--bastion-host-key", bastion.host_key]
    environment = {key: value for key, value in os.environ.items() if key != agent.AGENT_ENV}
    proc = subprocess.Popen(argv, cwd=REPO, env={**environment, REBOOT_FROM: before,
                                                 **({agent.AGENT_ENV: sock} if sock else {})},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write((node.ssh_dir / "client_key").read_text() if legacy else "")
    proc.stdin.close()
    proc.stdin = None  # sent and closed, as the provider does
    return proc


def install_that_reboots(node) -> str:
    """The install step with reboots allowed, on a node whose driver asks for one: the boot it left."""
    result = node.run_step(node.spec(allow_reboot=True), "install")
    assert result.returncode == 0, result.stderr
    before = rebooted_from(result.stdout)
    assert before and before in result.stdout
    return before


def test_the_wait_returns_once_the_node_is_back_on_a_new_boot_with_its_driver_loaded(node, bastion, key_agent):
    power = node.power_on(down_seconds=3, driver_load_seconds=4)
    before = install_that_reboots(node)
    proc = waiter(node, bastion, before, key_agent)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    boot = node.path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert boot != before and "back after" in out and f"on boot {boot} (was {before})" in out
    # It saw the node down (listener closed, then gone), then up with npu-smi still failing, then back.
    assert "not back yet" in out and "dcmi module initialize failed" in out, out
    # While it is down the bastion cannot reach it, and the wait says so in the bastion's words.
    assert "open failed: connect failed: Connection refused" in out, out
    assert power.events[:2] == ["stop-ssh", "stop-ssh"] and "down" in power.events and "up" in power.events
    # Every dial went through the bastion: the name resolves there alone.
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(NAME, node.port)
    assert (NAME, node.port) in bastion.forwards()


def test_a_node_that_stays_down_fails_the_wait_at_its_bound_naming_the_setting(node, bastion, key_agent):
    node.power_on(down_seconds=1)
    node.knob("reboot-stays-down", "1")
    before = install_that_reboots(node)
    proc = waiter(node, bastion, before, key_agent, timeout=8)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert "node npu-rb-01 not back within 8 s (rollout.rebootTimeout); last answer:" in err
    assert "once the node is back, run `pulumi up` again" in err


def test_nothing_is_dialled_when_the_install_step_rebooted_nothing(node, bastion, key_agent):
    proc = waiter(node, bastion, "", key_agent)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "the install step rebooted nothing" in out
    assert bastion.forwards() == []


def test_a_host_key_other_than_the_pinned_one_fails_at_once(node, bastion, key_agent, tmp_path):
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    pinned = " ".join(other.with_suffix(".pub").read_text().split()[:2])
    proc = waiter(node, bastion, "0a0a", key_agent, timeout=600, host_key=pinned)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "Host key verification failed" in err and "waiting cannot change that" in err


def test_the_key_never_touches_the_disk_and_a_killed_wait_leaves_no_ssh_behind(node, bastion):
    """The form that takes the key on stdin (contract 1): its agent holds it in memory, and goes with the wait."""
    node.power_on(down_seconds=1)
    node.knob("reboot-stays-down", "1")
    before = install_that_reboots(node)
    proc = waiter(node, bastion, before, timeout=600, legacy=True)
    key = (node.ssh_dir / "client_key").read_text().strip().splitlines()[1]
    deadline = time.monotonic() + 30
    folders: list[Path] = []
    while not folders and time.monotonic() < deadline:
        folders = list(Path("/tmp").glob(f"{PREFIX}{proc.pid}-*"))
        time.sleep(0.1)
    time.sleep(1)
    assert folders, "the wait made no folder"
    for path in folders[0].iterdir():
        assert path.is_socket() or key not in path.read_text()
    deadline = time.monotonic() + 20
    while not dialling(folders[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dialling(folders[0]), "no ssh dialling"
    # ^C on `pulumi up`: v1.2.1 kills a local command with SIGKILL (local/commandOutputs.go L59,113).
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while dialling(folders[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [command_line(pid) for pid in dialling(folders[0])] == []


def dialling(folder: Path) -> list[int]:
    """The processes whose command line names FOLDER (each `ssh -F FOLDER/config`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(folder) in (entry / "cmdline").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""
