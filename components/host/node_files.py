"""The files a host step needs on its node (its scripts, the uploaded installers), sent only when not there yet.

One `ssh` reads the SHA-256 of each file the node already has; a second, only when one is missing or different,
sends those as a tar stream that the node's own `tar` unpacks. Both run as the SSH user, under the node's
ASCEND_ROOT (empty on a real host), where pulumi-command v1.2.1's CopyToRemote wrote them before. A file already
in place is left as it is: a rerun with nothing new sends nothing and touches no file.
"""
from __future__ import annotations

import re
import shlex
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from components.host.openssh import Session, Streamed
from components.host.script_set import STAGED_NAME, STAGED_PARENT, named_scripts

ROOT = '"${ASCEND_ROOT:-}"'


class StageError(Exception):
    """A file the step needs is not on this machine."""


@dataclass(frozen=True)
class Staged:
    """A local file and where the node keeps it: REMOTE_DIR/<its name>, with its SHA-256."""

    path: str
    sha256: str
    remote_dir: str

    @property
    def remote(self) -> str:
        """Its path on the node, relative to the node's root (no leading slash)."""
        return f"{self.remote_dir.strip('/')}/{Path(self.path).name}"


def needed(command: str, scripts: str, upload: str = "") -> list[Staged]:
    """What COMMAND (a host step's, script_set.run_command) needs on the node: the scripts it names by SHA-256, from
    the folder SCRIPTS; with UPLOAD, the installers its ASCEND_<KIND>_FILE and _SHA256 name, from that folder into
    its ASCEND_STAGING."""
    files = [Staged(f"{scripts}/{step}.sh", digest, f"{STAGED_PARENT}/{STAGED_NAME}")
             for step, digest in named_scripts(command)]
    if upload:
        params = dict(w.split("=", 1) for w in shlex.split(command) if re.match(r"^ASCEND_[A-Z0-9_]+=", w))
        for key, name in params.items():
            digest = params.get(key.removesuffix("_FILE") + "_SHA256", "")
            if key.endswith("_FILE") and digest:
                files.append(Staged(f"{upload}/{name}", digest, params["ASCEND_STAGING"]))
    return files


def check_command(files: list[Staged]) -> str:
    """Prints `SHA256 PATH` for each of FILES the node has."""
    names = " ".join(shlex.quote(f.remote) for f in files)
    return (f'r={ROOT}; for f in {names}; do if [ -f "$r/$f" ]; then '
            'printf "%s %s\\n" "$(sha256sum <"$r/$f" | cut -c1-64)" "$f"; fi; done')


def unpack_command(files: list[Staged]) -> str:
    """Unpacks the tar stream on stdin under the node's root, the folders made first."""
    folders = " ".join(sorted({f'"$r"/{shlex.quote(f.remote_dir.strip("/"))}' for f in files}))
    return f'r={ROOT}; mkdir -p {folders} && exec tar -x -f - -C "$r/"'


def missing(files: list[Staged], listing: str) -> list[Staged]:
    """FILES the node does not have with their SHA-256, from the check's output."""
    have = {}
    for line in listing.splitlines():
        digest, _, path = line.partition(" ")
        have[path] = digest
    return [f for f in files if have.get(f.remote) != f.sha256]


def archive(files: list[Staged]):
    """Writes FILES as a tar stream, each under its path on the node, readable by all (modes are not kept)."""
    def write(sink: BinaryIO) -> None:
        with tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for f in files:
                info = tar.gettarinfo(f.path, arcname=f.remote)
                info.mode, info.uid, info.gid, info.uname, info.gname = 0o644, 0, 0, "", ""
                info.mtime = int(time.time())
                with open(f.path, "rb") as data:
                    tar.addfile(info, data)
    return write


def stage(ssh: Session, files: list[Staged]) -> Streamed:
    """FILES in place on the node; the answer of the last `ssh` it took (code 0 when all are there)."""
    for f in files:
        if not Path(f.path).is_file():
            raise StageError(f"{f.path} is not on this machine; the node needs it in /{f.remote_dir.strip('/')}")
    listed = ssh.stream(check_command(files), keep=True)
    if listed.code != 0:
        return listed
    wanted = missing(files, listed.out)
    if not wanted:
        return listed
    return ssh.stream(unpack_command(wanted), feed=archive(wanted))
