"""The files a host step needs on its node (its scripts, the uploaded installers), sent only when not there yet.

One `ssh` reads the SHA-256 of each file the node already has; a second, only when one is missing or different,
sends those as a tar stream that the node's own `tar` unpacks. Both run as the SSH user, under the node's
ASCEND_ROOT (empty on a real host). A file already in place is left as it is: a rerun with nothing new sends nothing
and touches no file. The program renders each script once per version, named by its SHA-256, in SCRIPTS (relative
to the project folder, where the local commands run); the node's run_step.sh takes it from STAGED.
"""
from __future__ import annotations

import hashlib
import shlex
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from components.runner.on_node import NodeCall
from components.runner.openssh import Session, Streamed

ROOT = '"${ASCEND_ROOT:-}"'
SCRIPTS = Path(".ascend-npu") / "scripts"
STAGED = "/var/tmp/ascend-npu-scripts"


class StageError(Exception):
    """A file the step needs is not on this machine, or not as the step names it."""


def script_file(script: str, sha256: str, folder: Path = SCRIPTS) -> Path:
    """Where the program renders the script SCRIPT whose SHA-256 is SHA256."""
    return folder / f"{script}.{sha256[:16]}.sh"


@dataclass(frozen=True)
class Staged:
    """A local file and where the node keeps it: REMOTE_DIR/<its name>, with its SHA-256."""

    path: str
    sha256: str
    remote_dir: str
    name: str = ""  # its name on the node, when not the local one's

    @property
    def remote(self) -> str:
        """Its path on the node, relative to the node's root (no leading slash)."""
        return f"{self.remote_dir.strip('/')}/{self.name or Path(self.path).name}"


def needed(call: NodeCall, folder: Path = SCRIPTS, upload: str = "", legacy_scripts: str = "") -> list[Staged]:
    """What CALL needs on the node: the scripts it names by SHA-256, rendered in FOLDER (contract 1: named
    <script>.sh in LEGACY_SCRIPTS); with UPLOAD, the installers its ASCEND_<KIND>_FILE and _SHA256 name, from that
    folder into its ASCEND_STAGING."""
    files = [Staged(f"{legacy_scripts}/{script}.sh" if legacy_scripts else str(script_file(script, digest, folder)),
                    digest, STAGED, f"{script}.sh") for script, digest in call.scripts]
    if upload:
        params = dict(call.params)
        for key, name in params.items():
            digest = params.get(key.removesuffix("_FILE") + "_SHA256", "")
            if key.endswith("_FILE") and digest:
                files.append(Staged(f"{upload}/{name}", digest, params.get("ASCEND_STAGING", "")))
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
        if f.remote_dir == STAGED and hashlib.sha256(Path(f.path).read_bytes()).hexdigest() != f.sha256:
            raise StageError(f"{f.path} is not the script the step names (sha256 {f.sha256})")
    listed = ssh.stream(check_command(files), keep=True)
    if listed.code != 0:
        return listed
    wanted = missing(files, listed.out)
    if not wanted:
        return listed
    return ssh.stream(unpack_command(wanted), feed=archive(wanted))
