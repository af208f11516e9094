"""A control plane started for one run stops with that run, even when the run is killed; `make cluster`'s stays.

Simulated: the component binaries (a `sleep` under etcd's name); real: the spawn (engine/control_plane.py) and the
kernel's parent-death signal."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STARTER = """
import sys, time
from pathlib import Path
import engine.control_plane as control_plane
control_plane.BIN = Path(sys.argv[1])
plane = control_plane.ControlPlane(Path(sys.argv[2]), tied=sys.argv[3] == "tied")
plane._spawn("etcd", [])
print("pid", (plane.home / "run" / "etcd.pid").read_text(), flush=True)
time.sleep(300)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def started(tmp_path: Path, mode: str, body: str = "exec sleep 300") -> tuple[subprocess.Popen, int]:
    """A process that starts the fake etcd (running BODY) as the bench does, and the etcd's pid."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    etcd = bin_dir / "etcd"
    etcd.write_text(f"#!/bin/sh\n{body}\n")
    etcd.chmod(0o755)
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(bin_dir), str(tmp_path / mode), mode], cwd=REPO,
                               stdout=subprocess.PIPE, text=True)
    lines = iter(starter.stdout.readline, "")
    return starter, int(next(line for line in lines if line.startswith("pid ")).split()[1])


def gone_within(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_tied_control_plane_dies_with_the_killed_run(tmp_path):
    starter, etcd = started(tmp_path, "tied")
    assert alive(etcd)
    starter.send_signal(signal.SIGKILL)  # nothing of the run's own clean-up runs
    starter.wait()
    assert gone_within(etcd, 10), "the control plane outlived the run that started it"


def test_a_tied_component_that_would_sit_out_a_sigterm_dies_with_the_run_too(tmp_path):
    # As kube-apiserver did, its graceful shutdown waiting on an etcd that had already gone: SIGTERM ignored.
    starter, etcd = started(tmp_path, "tied", "trap '' TERM\nexec sleep 300")
    starter.send_signal(signal.SIGTERM)
    starter.wait()
    assert gone_within(etcd, 10), "a component that ignores SIGTERM outlived the run that started it"


def test_make_clusters_control_plane_outlives_its_starter(tmp_path):
    starter, etcd = started(tmp_path, "kept")
    starter.send_signal(signal.SIGKILL)
    starter.wait()
    try:
        assert not gone_within(etcd, 1)
    finally:
        if alive(etcd):
            os.kill(etcd, signal.SIGKILL)
