"""The fake node's sandbox as its stand-in tools see it: root directory, knobs and logs."""
from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

KNOBS = "fake/knobs"
LOGS = "fake/log"


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
