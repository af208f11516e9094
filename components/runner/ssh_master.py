"""One step's connection to its node, shared by the step's commands: `ssh -M -N` and its control socket.

A host step reads what its node has staged, sends what is missing and runs its command: three `ssh` processes,
each with its own TCP connection, key exchange and login, and behind a bastion its own hop. With a master, the step
dials once; its commands attach to the master's control socket (OpenSSH 9.2p1 ssh.c L1535-1541: a client whose
ControlPath answers skips its own connect) and end with their own exit codes. The master listens only once its
login succeeded (ssh.c L1681 ssh_login before L2145 muxserver_listen), so a socket that exists is a connection
that works; a master that cannot connect exits, its reason in its log. It dies with this process, as every `ssh`
of a step does, and removes its socket when it ends (mux.c L1322-1325).

Behind a bastion the master's hop is its ProxyCommand, a child that holds the connection to the bastion. ssh sends
it SIGHUP only when ssh ends on its own or by fatal() (ssh.c L1722, clientloop.c L2691-2697); a master stopped while
it logs in (SIGTERM's default action) or killed leaves the hop, and its connection, behind. So the master leads a
process group of its own, and is stopped with its whole group.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional

# A Unix socket's path must fit sun_path (108 bytes on Linux; ssh refuses one of 104 or more, mux.c L2268).
SOCKET_PATH_MAX = 100
# How long a master may take to log in (two connects, each bounded by ConnectTimeout, and two logins behind a
# bastion) before the dial is given up.
LOGIN_BOUND_S = 60.0
POLL_S = 0.01


def taken(log: Path) -> str:
    """What an ssh process appended to LOG since it was last taken; LOG is left empty (absent: nothing)."""
    if not log.exists():
        return ""
    text = log.read_text(errors="replace")
    log.write_text("")
    return text


class Master:
    """`ssh -M -N` to the node of ARGV (ssh_argv's words), started when a command first needs it."""

    def __init__(self, argv: list[str], folder: Path, env: dict[str, str], preexec: Callable[[], None]):
        self.socket = folder / "mux"
        self.log = folder / "master.log"
        self._argv, self._env, self._preexec = argv, env, preexec
        self._proc: Optional[subprocess.Popen] = None
        # A folder whose path is too long for a socket: every command dials on its own, as without a master.
        self.usable = len(str(self.socket)) < SOCKET_PATH_MAX and "%" not in str(self.socket)

    def _options(self, master: bool) -> list[str]:
        return ["-o", f"ControlPath={self.socket}", "-o", f"ControlMaster={'yes' if master else 'no'}",
                "-o", "ControlPersist=no"]

    def client(self, argv: list[str]) -> list[str]:
        """ARGV attached to the master's socket; it dials on its own when there is none (ControlMaster=no)."""
        return [argv[0], *self._options(False), *argv[1:]] if self.usable else argv

    def up(self, limit: float = LOGIN_BOUND_S) -> Optional[str]:
        """None once the master is logged in (started now, or still up from an earlier command); else why not, in
        a few words (its log says more)."""
        if not self.usable:
            return None
        if self._proc is not None and self._proc.poll() is None and self.socket.exists():
            return None
        self.stop()
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen([self._argv[0], "-M", "-N", *self._options(True), *self._argv[1:]],
                                          env=self._env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=log, preexec_fn=self._preexec, start_new_session=True)
        deadline = time.monotonic() + min(limit, LOGIN_BOUND_S)
        while not self.socket.exists():
            if self._proc.poll() is not None:
                self.stop()
                return "ssh exited 255"
            if time.monotonic() > deadline:
                self.stop()
                return f"no answer within {min(limit, LOGIN_BOUND_S):.0f} s"
            time.sleep(POLL_S)
        return None

    def said(self) -> str:
        """What the master logged since last asked (its log is emptied)."""
        return taken(self.log)

    def stop(self) -> None:
        """Close the connection: the master and its hop end (the whole group), and its socket is gone."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            _signal_group(proc.pid, signal.SIGKILL)  # a hop that outlived its master
        if self.socket.exists():
            os.unlink(self.socket)


def _signal_group(leader: int, sig: signal.Signals) -> None:
    """SIG to the process group LEADER started, whatever of it is left."""
    try:
        os.killpg(leader, sig)
    except (ProcessLookupError, PermissionError):
        pass
