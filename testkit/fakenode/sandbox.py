"""The fake node's sandbox as its stand-in tools see it: root directory, knobs and logs; its /etc/os-release, and a
PATH that lacks chosen tools.

The os-release texts are verbatim copies of what those systems ship (each says where it was read), so preflight parses
what a real node holds. A host without a tool is a PATH without it: /usr/bin and /bin (merged on the test machine)
stand in as a directory of links to every program there except the hidden ones.
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

KNOBS = "fake/knobs"
LOGS = "fake/log"
SYSTEM_DIRS = ("/usr/bin", "/bin")


def root() -> Path:
    """The sandbox root: sshd gives every login ASCEND_ROOT (SetEnv in the node's sshd_config)."""
    return Path(os.environ["ASCEND_ROOT"])


def knob(name: str, default: str | None = None, base: Path | None = None) -> str | None:
    """A setting a test chose for this node (`fake/knobs/<name>`), or the default."""
    path = (base or root()) / KNOBS / name
    return path.read_text().strip() if path.exists() else default


def log(name: str, record: dict | str, base: Path | None = None) -> None:
    """Append one line (a JSON object or text) to `fake/log/<name>`."""
    path = (base or root()) / LOGS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write((json.dumps(record) if isinstance(record, dict) else record) + "\n")


def unix_socket(path: Path) -> None:
    """A unix socket file at PATH, as a listener leaves it; bound under a short name first, then moved, since a
    socket's path is limited to 107 bytes and sandboxes sit deep."""
    path.parent.mkdir(parents=True, exist_ok=True)
    short = Path(tempfile.mkdtemp(prefix="sock-")) / "s"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(short))
    short.rename(path)
    short.parent.rmdir()


# openEuler 22.03 LTS SP3, the fake node's kernel (5.10.0-182.0.0.95.oe2203sp3): `cat /etc/os-release` as posted
# from such hosts (for one, a vastbase install guide on openEuler 22.03 SP3, x86_64).
OPENEULER_2203_SP3 = """NAME="openEuler"
VERSION="22.03 (LTS-SP3)"
ID="openEuler"
VERSION_ID="22.03"
PRETTY_NAME="openEuler 22.03 (LTS-SP3)"
ANSI_COLOR="0;31"
"""
# Ubuntu 18.04.5 (Bionic Beaver), as `cat /etc/os-release` prints it there.
UBUNTU_1804_5 = """NAME="Ubuntu"
VERSION="18.04.5 LTS (Bionic Beaver)"
ID=ubuntu
ID_LIKE=debian
PRETTY_NAME="Ubuntu 18.04.5 LTS"
VERSION_ID="18.04"
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
VERSION_CODENAME=bionic
UBUNTU_CODENAME=bionic
"""
# Debian 12 (bookworm): /etc/os-release of the machine these tests were written on.
DEBIAN_12 = """PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
"""


def write_os_release(root: Path, text: str | None) -> None:
    """The node's /etc/os-release (None: the node has none, nor /usr/lib/os-release)."""
    path = Path(root) / "etc/os-release"
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(text)


def path_without(directory: Path, hidden: tuple[str, ...]) -> str:
    """A directory of links to every program of the system directories except HIDDEN; its path, for PATH."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for system in SYSTEM_DIRS:
        for entry in os.scandir(system):
            link = directory / entry.name
            if entry.name not in hidden and not link.exists() and not link.is_symlink():
                link.symlink_to(entry.path)
    return str(directory)
