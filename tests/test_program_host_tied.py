"""The program host a bench or test run starts (engine/pulumi_cli.py ProgramHost) stops when that run is killed.

Real: the program host (engine/program_host.py) and the kernel's parent-death signal; nothing is simulated."""
from __future__ import annotations

import signal
import subprocess
import sys

from tests.test_control_plane_tied import REPO, alive, gone_within

STARTER = """
import sys, time
from pathlib import Path
from engine.pulumi_cli import ProgramHost
host = ProgramHost(cwd=Path(sys.argv[1])).__enter__()
print("pid", host.pid, flush=True)
time.sleep(300)
"""


def test_a_killed_run_leaves_no_program_host_serving(tmp_path):
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE,
                               text=True)
    lines = iter(starter.stdout.readline, "")
    host = int(next(line for line in lines if line.startswith("pid ")).split()[1])
    assert alive(host)
    starter.send_signal(signal.SIGKILL)  # its __exit__ never runs
    starter.wait()
    assert gone_within(host, 10), "the program host outlived the run that started it"
