"""Watching and interrupting a step while it runs on the fake node: its lock, its processes, its session."""
from __future__ import annotations

import fcntl
import os
import signal
import time
from pathlib import Path

LOCK = "var/lib/ascend-npu/run.lock"


def wait_for(condition, timeout: float = 30, what: str = "a condition") -> None:
    """Poll CONDITION until it holds; an AssertionError naming WHAT after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def holder(root: Path) -> dict[str, str]:
    """The lock holder's record (pid, session, step, since), empty when none was written."""
    path = Path(root) / (LOCK + ".holder")
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def is_locked(root: Path) -> bool:
    """Whether some process holds the node's run lock now."""
    path = Path(root) / LOCK
    if not path.exists():
        return False
    with path.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_run(root: Path) -> None:
    """SIGKILL the running step and everything it started (its process group), as a crash or an OOM kill would."""
    pid = int(holder(root)["pid"])
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    wait_for(lambda: not is_locked(root), what="the killed run to release the lock")
