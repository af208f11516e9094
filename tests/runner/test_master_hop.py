"""A step's master connection behind a bastion ends with its hop: the ProxyCommand that holds the connection to the
bastion is gone once the master is stopped, also while the master is still logging in (OpenSSH sends the hop SIGHUP
only when ssh ends on its own: V_9_2_P1 ssh.c L1722, clientloop.c L2691-2697). Real OpenSSH client; the hop is a
process that holds its stdio open and answers nothing, as a bastion whose node does not answer yet."""
from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from components.runner.ssh_master import Master

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="the OpenSSH client is not installed")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_a_master_given_up_while_logging_in_takes_its_hop_with_it(tmp_path):
    pid_file = tmp_path / "hop.pid"
    hop = f"sh -c 'echo $$ > {pid_file}; exec sleep 300'"
    argv = ["ssh", "-F", "/dev/null", "-o", f"ProxyCommand={hop}", "-o", "BatchMode=yes",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=60", "root@node.behind.test"]
    master = Master(argv, tmp_path, dict(os.environ), lambda: None)
    assert master.up(limit=1) == "no answer within 1 s"
    deadline = time.monotonic() + 5
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    hop_pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while alive(hop_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not alive(hop_pid), "the hop, and its connection to the bastion, outlived its master"
    finally:
        if alive(hop_pid):
            os.kill(hop_pid, signal.SIGKILL)
