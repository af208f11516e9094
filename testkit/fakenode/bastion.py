"""A bastion: Debian's OpenSSH sshd on a loopback address, forwarding only, that alone resolves the nodes' names.

Not simulated: it is the real sshd. Its logins run no command (ForceCommand /bin/false), as a locked-down jump host;
TCP forwarding is all it allows. It runs in a mount namespace of its own whose /etc/hosts maps NAMES to the nodes'
loopback addresses, so a stack that names its nodes that way reaches them through the bastion or not at all.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from testkit.fakenode.sshd import wait_listening

SSHD = "/usr/sbin/sshd"
FORWARD = re.compile(r"server_request_direct_tcpip: originator \S+ port \d+, target (\S+) port (\d+)")


class Bastion:
    """`with Bastion(workdir, "127.0.0.9", port, {"npu-01.nodes.test": "127.0.0.2"}, authorized) as bastion:`."""

    def __init__(self, workdir: Path, address: str, port: int, names: dict[str, str], authorized: Path):
        self.workdir, self.address, self.port, self.names = Path(workdir), address, port, names
        self.authorized = authorized
        self.host_key = ""
        self._sshd: subprocess.Popen | None = None

    def __enter__(self) -> Bastion:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def log(self) -> Path:
        return self.workdir / "sshd.log"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        key = self.workdir / "host_key"
        if not key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        self.host_key = " ".join(key.with_suffix(".pub").read_text().split()[:2])
        shutil.copy(self.authorized, self.workdir / "authorized_keys")
        self._write_hosts()
        (self.workdir / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress {self.address}\nHostKey {key}\n"
            f"AuthorizedKeysFile {self.workdir / 'authorized_keys'}\nPidFile none\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "AllowTcpForwarding yes\nPermitTTY no\nX11Forwarding no\nForceCommand /bin/false\nLogLevel DEBUG1\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        inner = (f"mount --bind {self.workdir / 'hosts'} /etc/hosts && "
                 f"exec {SSHD} -D -e -f {self.workdir / 'sshd_config'}")
        with self.log.open("a") as log:
            self._sshd = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", inner],
                                          stdout=log, stderr=log, env={**os.environ})
        wait_listening(self._sshd, self.address, self.port, self.log)

    def route(self, names: dict[str, str], authorized: Path) -> None:
        """From the next connection on: NAMES resolve on the bastion to these addresses, and the keys in
        AUTHORIZED log in (the file is rewritten in place: the bind mount keeps its inode)."""
        self.names = dict(names)
        self._write_hosts()
        shutil.copy(authorized, self.workdir / "authorized_keys")

    def _write_hosts(self) -> None:
        """The bastion's /etc/hosts: truncated and written in place (same inode), so its bind mount sees it."""
        (self.workdir / "hosts").write_text("127.0.0.1 localhost\n" + "".join(
            f"{ip} {name}\n" for name, ip in self.names.items()))

    def stop(self) -> None:
        if self._sshd is not None and self._sshd.poll() is None:
            self._sshd.terminate()
            self._sshd.wait(timeout=10)

    def forwards(self) -> list[tuple[str, int]]:
        """Every connection the bastion opened for a client, as (target, port), in order."""
        text = self.log.read_text() if self.log.exists() else ""
        return [(m.group(1), int(m.group(2))) for m in FORWARD.finditer(text)]
