"""A fleet of fake nodes served by one process: Debian's OpenSSH sshd per connection, a sandbox per node.

Real: sshd (`sshd -i`, started per connection as inetd would start it, one host key for the whole fleet), the client's
`ssh`, the bastion in front (bastion.py), and the staging: node_files.py's sha256sum, mkdir and tar run in the node's
own sandbox, so a node's first step really sends its files and a rerun sends nothing. Simulated: what a host step's
command does once its scripts are staged: fleet_node.sh, the fleet's ForceCommand, answers install, verify,
npu_network and on_destroy at once with what the real step prints on success (the installers, the NPUs and the NPU
network answer at once, no reboot is ever needed). Each node keeps its own loopback address (127.64.x.y), all on one
port, so a node is told by the address its client dialled, as a real one is.
"""
from __future__ import annotations

import resource
import selectors
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import BinaryIO, Sequence

SSHD = "/usr/sbin/sshd"
NODE_COMMAND = Path(__file__).resolve().parent / "fleet_node.sh"
# Open files the acceptor needs beyond one listener per node: its connections in flight, logs, the caller's own.
SPARE_FILES = 1024


def fleet_address(index: int) -> str:
    """The loopback address of the fleet's INDEX-th node (127.64.0.1 first; no .0 or .255)."""
    return f"127.{64 + index // 64000}.{index // 250 % 256}.{index % 250 + 1}"


def allow_open_files(wanted: int) -> None:
    """At least WANTED open files for this process (root may raise the hard limit too)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(hard, wanted)))


def listen_all(addresses: Sequence[str], attempts: int = 50) -> list[socket.socket]:
    """One listening socket per address, all on one port free on every one of them."""
    for _ in range(attempts):
        sockets: list[socket.socket] = []
        try:
            for address in addresses:
                sock = socket.socket()
                sockets.append(sock)
                sock.bind((address, sockets[0].getsockname()[1] if len(sockets) > 1 else 0))
                sock.listen(64)
                sock.setblocking(False)
            return sockets
        except OSError:
            for sock in sockets:
                sock.close()
    raise RuntimeError(f"no port free on all {len(addresses)} fleet addresses")


class Fleet:
    """`with Fleet(workdir, 200, authorized_pub) as fleet:` nodes at fleet.addresses, all on fleet.port."""

    def __init__(self, workdir: Path, count: int, authorized: Path, chips: Sequence[str] = ()):
        self.workdir, self.authorized = Path(workdir), authorized
        self.addresses = [fleet_address(i) for i in range(count)]
        self.chips = dict(zip(self.addresses, chips))
        self.port, self.host_key = 0, ""
        self.opened = self.most = 0  # connections accepted in all, and the most served at once
        self._live: list[subprocess.Popen] = []
        self._listeners: list[socket.socket] = []
        self._log: BinaryIO | None = None
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fleet-acceptor", daemon=True)

    def __enter__(self) -> Fleet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def root(self, address: str) -> Path:
        """The node's sandbox root (its ASCEND_ROOT)."""
        return self.workdir / "nodes" / address

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        key = self.workdir / "host_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        self.host_key = " ".join(key.with_suffix(".pub").read_text().split()[:2])
        shutil.copy(self.authorized, self.workdir / "authorized_keys")
        for address in self.addresses:
            for folder in ("fake/knobs", "fake/log", "home"):
                (self.root(address) / folder).mkdir(parents=True, exist_ok=True)
            (self.root(address) / "fake/knobs/chip").write_text(self.chips.get(address, "910B") + "\n")
        (self.workdir / "home").mkdir(exist_ok=True)
        # HOME in the fleet's folder: Debian's bash sources ~/.bashrc for the commands sshd starts.
        (self.workdir / "sshd_config").write_text(
            f"HostKey {key}\nAuthorizedKeysFile {self.workdir / 'authorized_keys'}\nPidFile none\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "UsePAM no\nStrictModes no\nAllowTcpForwarding no\nPermitTTY no\nX11Forwarding no\n"
            f"SetEnv FLEET_NODES={self.workdir / 'nodes'} HOME={self.workdir / 'home'} PATH=/usr/bin:/bin\n"
            f"ForceCommand {NODE_COMMAND}\nLogLevel ERROR\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        allow_open_files(len(self.addresses) + SPARE_FILES)
        self._listeners = listen_all(self.addresses)
        self.port = self._listeners[0].getsockname()[1]
        self._log = (self.workdir / "sshd.log").open("ab")
        self._thread.start()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            for sock in self._listeners:
                selector.register(sock, selectors.EVENT_READ)
            while not self._halt.is_set():
                for ready, _ in selector.select(timeout=0.2):
                    try:
                        conn, _ = ready.fileobj.accept()  # type: ignore[union-attr]
                    except BlockingIOError:
                        continue
                    self._start_sshd(conn)
                self._live = [proc for proc in self._live if proc.poll() is None]

    def _start_sshd(self, conn: socket.socket) -> None:
        """sshd in inetd mode on CONN, its stdin and stdout."""
        conn.setblocking(True)
        with conn:
            proc = subprocess.Popen([SSHD, "-i", "-e", "-f", str(self.workdir / "sshd_config")], stdin=conn,
                                    stdout=conn, stderr=self._log)
        self._live = [p for p in self._live if p.poll() is None] + [proc]
        self.opened += 1
        self.most = max(self.most, len(self._live))

    def steps(self, address: str) -> list[str]:
        """The host steps the node answered, in order."""
        log = self.root(address) / "fake/log/steps.log"
        return log.read_text().split() if log.exists() else []

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for sock in self._listeners:
            sock.close()
        for proc in self._live:
            proc.terminate()
            proc.wait(timeout=10)
        self._live = []
        if self._log is not None:
            self._log.close()
            self._log = None
