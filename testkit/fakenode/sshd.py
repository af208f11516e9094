"""The fake node's OpenSSH sshd: its config, and waiting until it listens."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from testkit.fakenode.mirror import MIRROR_CA


def sshd_config(port: int, address: str, ssh_dir: Path, bin_dir: Path, root: Path, system_path: str) -> str:
    """sshd_config of a node whose every login sees the sandbox ROOT and the stand-ins in BIN_DIR first.

    SetEnv configures the node, not the command: the tests send exactly what host_steps() returns. HOME points into
    the sandbox so bash does not source the tester's own ~/.bashrc (Debian's bash does that for commands sshd
    starts), which would put other tools ahead of the stand-ins on PATH. curl on the node trusts the test mirror's
    CA alone (it reads CURL_CA_BUNDLE), as a node trusts its own mirror's.
    """
    return f"""Port {port}
ListenAddress {address}
HostKey {ssh_dir / 'host_key'}
AuthorizedKeysFile {ssh_dir / 'authorized_keys'}
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv ASCEND_ROOT={root} PATH={bin_dir}:{system_path} HOME={root / 'home'} CURL_CA_BUNDLE={root / MIRROR_CA}
"""


def wait_listening(sshd: subprocess.Popen, address: str, port: int, log: Path, limit: float = 10) -> None:
    """Return once sshd accepts connections; raise with its log when it exits or does not listen in time."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd exited: {log.read_text()}")
        try:
            socket.create_connection((address, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not start listening within {limit:.0f} s")
