"""The processes of one measured run: every one of them reaped by the measuring process, and the CPU split by part.

The measuring process is the subreaper of what it starts, so that an orphan counts in its children's CPU too: an `ssh`
never waits for its ProxyCommand (the bastion hop), which the kernel would otherwise hand to init. While the CLI runs,
its processes' counters are read from /proc every half second; the last reading of each, taken before it ends, splits
the CPU between the CLI itself (the engine), each plugin itself, the local commands the command provider ran (its
waited-for children: the host runner, ssh, the drain) and the program host.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
TICKS = os.sysconf("SC_CLK_TCK")


def counters(pid: int) -> tuple[float, float] | None:
    """A live process's own CPU seconds and those of its children it has waited for; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime) / TICKS, (cutime + cstime) / TICKS


def children(pid: int) -> list[int]:
    """The live children of PID (every thread's: a Go program forks from any of them)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(word) for word in task.read_text().split()]
        except OSError:
            continue
    return found


def part_of(pid: int) -> str:
    """The part a plugin is, by its command line."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    line = b" ".join(words).decode(errors="replace")
    if "command_standin" in line or "pulumi-resource-command" in line:
        return "command provider"
    return Path(words[0].decode(errors="replace")).name or "other"


class Split(threading.Thread):
    """`Split(cli_pid, host_pid)`: the last reading of each part's CPU while the CLI runs (see the module)."""

    def __init__(self, cli: int, host: int, every: float = 0.5):
        super().__init__(name="cpu-split", daemon=True)
        self.cli, self.host, self.every = cli, host, every
        self.last: dict[int, tuple[str, float, float]] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.every):
            for pid, part in [(self.cli, "engine (the CLI)"), (self.host, "program host"),
                              *((p, "") for p in children(self.cli))]:
                read = counters(pid)
                if read is not None:
                    self.last[pid] = (self.last[pid][0] if pid in self.last else part or part_of(pid), *read)

    def parts(self) -> dict[str, float]:
        """CPU seconds by part; the command provider's local commands apart from it."""
        self._halt.set()
        self.join()
        split: dict[str, float] = {}
        for part, own, waited in self.last.values():
            split[part] = split.get(part, 0.0) + own
            if part == "command provider":
                split["local commands"] = split.get("local commands", 0.0) + waited
        return split


def _terminate_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_reaped(argv: list[str], cwd: Path, env: dict, host: int) -> tuple[int, str, dict[str, float]]:
    """ARGV to its end, its output and its CPU by part; every process it leaves orphaned is reaped here as well."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    with tempfile.TemporaryFile() as out:
        # Stopped with the measuring process (SIGTERM, which the CLI takes as a cancel and ends its plugins on),
        # which the subreaper does not do: a stopped bench left its `pulumi up` running.
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_terminate_with_parent)
        split = Split(proc.pid, host)
        split.start()
        while (reaped := os.waitpid(-1, 0))[0] != proc.pid:
            pass
        proc.returncode = os.waitstatus_to_exitcode(reaped[1])
        out.seek(0)
        return proc.returncode, out.read().decode(errors="replace"), split.parts()


def reap_orphans(limit: float = 10) -> None:
    """Wait for the orphans still running (up to LIMIT seconds), reaping each."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.05)
        except ChildProcessError:
            return
