"""OpenSSH's `ssh` to one node, through the bastion when there is one, trusting only the pinned host keys.

Each dial is bounded: ConnectTimeout bounds the TCP connect and the banner (readconf.c, sshconnect.c), where
pulumi-command v1.2.1 bounds the TCP connect only and retries a failed handshake behind a bastion on the same dead
connection (provider/pkg/provider/remote/connection.go L104, L222-241). A session's commands share one connection
(ssh_master.py). Steps authenticate through an SSH agent alone (agent.py); every `ssh` dies with this process
(PR_SET_PDEATHSIG), as a killed local command's children must.
"""
from __future__ import annotations

import base64
import binascii
import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Optional

from components.runner.contract import Endpoint
from components.runner.ssh_master import Master, taken

PR_SET_PDEATHSIG = 1
AGENT_ENV = "SSH_AUTH_SOCK"
PREFIX = "ascend-npu-ssh-"
# One dial: TCP connect and banner; a live connection that stops answering is given up after 3 keepalives (ssh's
# ServerAliveCountMax default).
CONNECT_TIMEOUT, ALIVE_INTERVAL = 10, 5
# What says nothing of why a dial failed: the node's ssh after its jump failed, the jump's VERBOSE lines.
CLOSED = ("kex_exchange_identification:", "Connection closed by", "stdio forwarding failed", "Authenticated to",
          "Transferred:", "Bytes per second:", "Connection to ", "Killed by signal")
HOP_FAILED = "open failed:"


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class Answer:
    """One dial: the exit code (255: ssh itself failed), stdout, and the last line ssh or the command wrote."""

    code: int
    out: str
    said: str


@dataclass(frozen=True)
class Streamed:
    """One command whose output went on as it came: its exit code, whether it printed anything on stdout, the line
    that says why ssh failed (when it did), and stdout when it was kept rather than passed on."""

    code: int
    printed: bool
    said: str
    out: str = ""


def cause(stderr: str) -> str:
    """The line of ssh's stderr that says why it failed. Behind a bastion it is the jump's (`channel 0: open failed:
    ...`); the node's own ssh then only says its connection closed."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    hop = [line for line in lines if HOP_FAILED in line]
    causes = hop or [line for line in lines if not line.startswith(CLOSED)] or lines
    return causes[-1] if causes else ""


def key_type(pin: str) -> str:
    """The type a pinned key's blob names (`ssh-rsa` for an RSA key however its label reads: `rsa-sha2-512` is a
    signature algorithm, not a key type), else the pin's own label."""
    label, _, rest = pin.partition(" ")
    try:
        blob = base64.b64decode(rest.split()[0] if rest.split() else "", validate=True)
    except (binascii.Error, ValueError):
        return label
    size = int.from_bytes(blob[:4], "big")
    named = blob[4:4 + size]
    return named.decode("ascii", "replace") if 0 < size == len(named) and named.isascii() else label


def known_host(end: Endpoint) -> str:
    """END's pinned key as a known_hosts line (`[host]:port` off port 22), typed by its blob. ssh then negotiates
    any signature the key allows (an RSA key: rsa-sha2-512, rsa-sha2-256): OpenSSH V_9_2_P1 sshconnect2.c
    L122-218, order_hostkeyalgs, puts the algorithms of the known key's type first."""
    name = end.host if end.port == 22 else f"[{end.host}]:{end.port}"
    words = end.host_key.split()
    return f"{name} {key_type(end.host_key)} {words[1] if len(words) > 1 else ''}\n"


def ssh_argv(node: Endpoint, bastion: Optional[Endpoint], known_hosts: Path, identity: Optional[str],
             connect_timeout: int, jump_log: Optional[Path] = None) -> list[str]:
    """`ssh` to NODE (through BASTION) trusting only their pinned keys (written to KNOWN_HOSTS), never prompting,
    its connect bounded; up to the destination, the remote command is the caller's. Without IDENTITY (a key file)
    the caller's agent authenticates. With JUMP_LOG, the jump writes its VERBOSE lines there, not on ssh's stderr.
    ssh runs a ProxyCommand as `$SHELL -c "exec COMMAND"` (OpenSSH 9.2p1 sshconnect.c L97, L204-205, L241-243): the
    caller sets SHELL=/bin/sh for the quoting below."""
    known_hosts.write_text("".join(known_host(end) for end in (node, bastion) if end is not None))
    common = ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
              "-o", f"UserKnownHostsFile={known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
              "-o", f"ConnectTimeout={connect_timeout}", "-o", f"ServerAliveInterval={ALIVE_INTERVAL}"]
    if identity:
        common += ["-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-i", identity]
    options = [*common, "-o", "LogLevel=ERROR", "-p", str(node.port)]
    if bastion is not None:
        # The jump host is dialled with the same options: its own pinned key, the same identity.
        jump = ["ssh", *common, "-o", f"LogLevel={'VERBOSE' if jump_log else 'ERROR'}", "-p", str(bastion.port),
                "-W", "%h:%p", f"{bastion.user}@{bastion.host}"]
        # ssh percent-expands the whole ProxyCommand, the log's path too.
        log = f" 2>>{shlex.quote(str(jump_log)).replace('%', '%%')}" if jump_log else ""
        options += ["-o", "ProxyCommand=" + " ".join(shlex.quote(word) for word in jump) + log]
    return ["ssh", *options, f"{node.user}@{node.host}"]


def _remove_stale(parent: Path) -> None:
    """Folders of runs that were killed (their pid is gone): no secret in them, only known_hosts, logs, a socket."""
    for folder in parent.glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


class Session:
    """`with Session(node, bastion, agent) as ssh: ssh.run(command, limit)`: authenticated by the SSH agent at the
    socket AGENT (agent.py), or, with None, the one SSH_AUTH_SOCK names."""

    def __init__(self, node: Endpoint, bastion: Optional[Endpoint], agent: Optional[str] = None):
        self.node, self.bastion = node, bastion
        self.env = {**os.environ, "SHELL": "/bin/sh", **({AGENT_ENV: agent} if agent else {})}

    def __enter__(self) -> Session:
        parent = Path(tempfile.gettempdir())
        _remove_stale(parent)
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
        try:
            # At VERBOSE the jump says why the bastion could not reach the node: kept aside for a failed dial, never
            # in the step's output (its "Killed by signal 1." would read as an error, and be stored in the state).
            self.jump_log = self.folder / "jump.log"
            self.argv = ssh_argv(self.node, self.bastion, self.folder / "known_hosts", None, CONNECT_TIMEOUT,
                                 jump_log=self.jump_log if self.bastion else None)
            self.master = Master(self.argv, self.folder, self.env, _die_with_parent)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if getattr(self, "master", None) is not None:
            self.master.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, command: str, limit: float) -> Answer:
        """COMMAND on the node, given up after LIMIT seconds whatever it waits for (exit 255 then)."""
        started = time.monotonic()
        failed = self.master.up(limit)
        if failed is not None:
            return Answer(255, "", self._cause("") or failed)
        try:
            done = subprocess.run([*self.master.client(self.argv), command], env=self.env, capture_output=True,
                                  text=True, errors="replace", stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
                                  timeout=max(limit - (time.monotonic() - started), 1))
        except subprocess.TimeoutExpired:
            return Answer(255, "", f"no answer within {limit:.0f} s")
        return Answer(done.returncode, done.stdout, self._cause(done.stderr))

    def _cause(self, stderr: str) -> str:
        """Why this dial failed, from the jump's lines, the master's and ssh's; the logs are emptied for the next."""
        return cause("\n".join((taken(self.jump_log), self.master.said(), stderr)))

    def stream(self, command: str, stdin: Optional[str] = None, feed: Optional[Callable[[BinaryIO], None]] = None,
               keep: bool = False) -> Streamed:
        """COMMAND on the node, its stdout and stderr passed on as they come (stdout kept instead with KEEP), STDIN
        or what FEED writes as its input; no time limit but the connection's keepalives."""
        failed = self.master.up()
        if failed is not None:
            return Streamed(255, False, self._cause("") or failed)
        proc = subprocess.Popen([*self.master.client(self.argv), command], env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        out, err = bytearray(), bytearray()
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, None if keep else sys.stdout.buffer, out)),
                 threading.Thread(target=_pump, args=(proc.stderr, sys.stderr.buffer, err, TAIL)),
                 threading.Thread(target=_feed, args=(proc.stdin, stdin, feed))]
        for pump in pumps:
            pump.daemon = True
            pump.start()
        code = proc.wait()
        for pump in pumps[:2]:
            pump.join()
        said = self._cause(err.decode(errors="replace"))
        return Streamed(code, bool(out), said if code == 255 else "", out.decode(errors="replace") if keep else "")


# What of a command's stderr is kept to say why ssh failed.
TAIL = 8192


def _pump(source: BinaryIO, to: Optional[BinaryIO], kept: bytearray, tail: int = 0) -> None:
    """SOURCE passed on to TO as it comes (each chunk flushed: a step's lines show while it runs) and kept in KEPT:
    whole without TO, its last TAIL bytes with TAIL, else its first byte (that there was output)."""
    while chunk := os.read(source.fileno(), 65536):
        kept.extend(chunk if to is None or tail else chunk[:1 - len(kept[:1])])
        if tail and len(kept) > tail:
            del kept[:-tail]
        if to is not None:
            to.write(chunk)
            to.flush()


def _feed(sink: BinaryIO, text: Optional[str], feed: Optional[Callable[[BinaryIO], None]]) -> None:
    """The command's input, then its end; a command that stops reading early is no error of the feed."""
    try:
        if feed is not None:
            feed(sink)
        elif text:
            sink.write(text.encode())
        sink.close()
    except (OSError, ValueError):
        pass
