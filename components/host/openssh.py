"""OpenSSH's `ssh` to one node, through the bastion when there is one, with the stack's pins and key; nothing on disk.

The reboot wait dials a node many times while it comes back, each dial bounded: `ssh` closes its connection when it
ends, and its ConnectTimeout bounds the TCP connect and the banner (readconf.c, sshconnect.c), where
pulumi-command v1.2.1 bounds the TCP connect only and retries a failed handshake behind a bastion on the same dead
connection (provider/pkg/provider/remote/connection.go L104, L222-241). The private key is held in an anonymous
memory file (memfd) of this process, never written to a file system, and gone when it ends; every `ssh` dies with
this process (PR_SET_PDEATHSIG), as a killed local command's children must.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PR_SET_PDEATHSIG = 1
NODE, BASTION = "ascend-node", "ascend-bastion"
PREFIX = "ascend-npu-ssh-"
# One dial: TCP connect and banner; a live connection that stops answering is given up after 3 keepalives.
CONNECT_TIMEOUT, ALIVE_INTERVAL, ALIVE_COUNT = 10, 5, 3
# What says nothing of why a dial failed: the node's ssh after its jump failed, the jump's VERBOSE lines.
CLOSED = ("kex_exchange_identification:", "Connection closed by", "stdio forwarding failed", "Authenticated to",
          "Transferred:", "Bytes per second:", "Connection to ", "Killed by signal")
HOP_FAILED = "open failed:"


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class Endpoint:
    """Where `ssh` connects: address, port, user and the pinned host key (`TYPE BASE64`)."""

    host: str
    port: int
    user: str
    host_key: str


@dataclass(frozen=True)
class Answer:
    """One dial: the exit code (255: ssh itself failed), stdout, and the last line ssh or the command wrote."""

    code: int
    out: str
    said: str


def ssh_config(node: Endpoint, bastion: Optional[Endpoint], folder: Path, identity: Optional[Path]) -> str:
    """The ssh_config of one dial: pins only (no known_hosts of the user's), batch mode, bounded waits."""
    blocks = [(NODE, node, f"  ProxyJump {BASTION}\n" if bastion else "")]
    if bastion is not None:  # at VERBOSE the jump says why the bastion could not reach the node
        blocks.append((BASTION, bastion, "  LogLevel VERBOSE\n"))
    text = "".join(f"Host {alias}\n  HostName {end.host}\n  Port {end.port}\n  User {end.user}\n"
                   f"  HostKeyAlias {alias}\n{extra}" for alias, end, extra in blocks)
    keys = f"  IdentitiesOnly yes\n  IdentityFile {identity}\n" if identity else ""
    return text + (f"Host *\n  BatchMode yes\n  StrictHostKeyChecking yes\n  UserKnownHostsFile {folder}/known_hosts\n"
                   f"  GlobalKnownHostsFile /dev/null\n  UpdateHostKeys no\n  CheckHostIP no\n{keys}"
                   f"  ConnectTimeout {CONNECT_TIMEOUT}\n  ServerAliveInterval {ALIVE_INTERVAL}\n"
                   f"  ServerAliveCountMax {ALIVE_COUNT}\n  ControlMaster no\n  ControlPath none\n"
                   "  ForwardAgent no\n  LogLevel ERROR\n")


def _remove_stale(parent: Path) -> None:
    """Folders of runs that were killed (their pid is gone): they hold no secret, only their config and socket."""
    for folder in parent.glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


class Session:
    """`with Session(node, bastion, key) as ssh: ssh.run(command, limit)`; KEY None uses the caller's SSH agent."""

    def __init__(self, node: Endpoint, bastion: Optional[Endpoint], key: Optional[str]):
        self.node, self.bastion, self.key = node, bastion, key
        self.env = dict(os.environ)
        self._key_fd: Optional[int] = None

    def __enter__(self) -> Session:
        parent = Path(tempfile.gettempdir())
        _remove_stale(parent)
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
        try:
            identity = self._hold_key(self.key) if self.key is not None else None
            pins = [(NODE, self.node)] + ([(BASTION, self.bastion)] if self.bastion else [])
            (self.folder / "known_hosts").write_text("".join(f"{alias} {end.host_key}\n" for alias, end in pins))
            (self.folder / "config").write_text(ssh_config(self.node, self.bastion, self.folder, identity))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._key_fd is not None:
            os.close(self._key_fd)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _hold_key(self, key: str) -> Path:
        """The key in an anonymous memory file of this process, which `ssh` opens by its /proc path while this
        process lives (ssh checks its mode: 0600)."""
        self._key_fd = os.memfd_create("ascend-npu-ssh-key", os.MFD_CLOEXEC)
        os.write(self._key_fd, (key if key.endswith("\n") else key + "\n").encode())
        os.fchmod(self._key_fd, 0o600)
        return Path(f"/proc/{os.getpid()}/fd/{self._key_fd}")

    def run(self, command: str, limit: float) -> Answer:
        """COMMAND on the node, given up after LIMIT seconds whatever it waits for (exit 255 then)."""
        argv = ["ssh", "-F", str(self.folder / "config"), NODE, command]
        try:
            done = subprocess.run(argv, env=self.env, capture_output=True, text=True, errors="replace",
                                  timeout=limit, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired:
            return Answer(255, "", f"no answer within {limit:.0f} s")
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        # Behind a bastion the cause is the jump's line (`channel 0: open failed: ...`); the node's own ssh then
        # only says its connection closed.
        hop = [line for line in lines if HOP_FAILED in line]
        causes = hop or [line for line in lines if not line.startswith(CLOSED)] or lines
        return Answer(done.returncode, done.stdout, causes[-1] if causes else "")
