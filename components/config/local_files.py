"""What the engine itself takes from this machine before anything runs: the upload directory and its files, the
SSH agent a stack with `ssh.useAgent` logs in with, and the OpenSSH client every host step dials with."""
from __future__ import annotations

import shutil
import stat
from pathlib import Path
from typing import Callable, Mapping, Optional

from components.config.packages import Source
from components.config.problems import Problem
from components.config.stack import StackSpec


def local_file_problems(spec: StackSpec, cwd: Path) -> list[Problem]:
    """With `packages.source: upload`, the directory must exist and hold every listed file: the engine hashes the
    directory when the program registers its upload, in preview too, and a missing one fails there with a
    traceback. The sums are left to the nodes, which check each file before running it."""
    packages = spec.packages
    if packages.source is not Source.UPLOAD or packages.directory is None:
        return []
    directory = (cwd / packages.directory).resolve()
    if not directory.is_dir():
        return [Problem("packages.directory", f"`{packages.directory}` is not a directory here ({directory}): "
                                              "put the .run files there, or set packages.directory to where they are")]
    return [Problem(f"packages.files[{i}].file", f"`{pkg.file}` is not in `{packages.directory}`: "
                                                 "copy it there (the sha256 in the stack must match it)")
            for i, pkg in enumerate(packages.files) if not (directory / pkg.file).is_file()]


def agent_problems(spec: StackSpec, environ: Mapping[str, str], command: str = "up") -> list[Problem]:
    """With `ssh.useAgent`, the steps log in with the keys of the agent SSH_AUTH_SOCK names, so an `up` needs one
    that is there. OpenSSH needs nothing else: with `sshPrivateKey` every step uses an agent of its own holding that
    key (components/runner/agent.py) whatever SSH_AUTH_SOCK says here, and a preview dials nothing."""
    if not spec.ssh.use_agent or command != "up":
        return []
    socket = environ.get("SSH_AUTH_SOCK", "")
    if not socket:
        return [Problem("ssh.useAgent", "true, but SSH_AUTH_SOCK is not set here: start an agent and add the key "
                                        "(`eval $(ssh-agent) && ssh-add KEYFILE`), or set sshPrivateKey instead")]
    try:
        is_socket = stat.S_ISSOCK(Path(socket).stat().st_mode)
    except OSError:
        is_socket = False
    if not is_socket:
        return [Problem("ssh.useAgent", f"true, but SSH_AUTH_SOCK names {socket}, where no agent listens (one that "
                                        "is gone: an old shell, a closed forwarded session): start an agent and add "
                                        "the key (`eval $(ssh-agent) && ssh-add KEYFILE`), or set sshPrivateKey")]
    return []


def openssh_problems(spec: StackSpec, which: Callable[[str], Optional[str]] = shutil.which) -> list[Problem]:
    """Every host step dials its node with OpenSSH's `ssh` from this machine (components/runner), and with
    `sshPrivateKey` loads the key into `ssh-agent` with `ssh-add`: all from the OpenSSH client package."""
    if not spec.nodes:
        return []
    tools = ("ssh", "ssh-agent", "ssh-add") if spec.ssh_private_key is not None else ("ssh",)
    absent = [tool for tool in tools if which(tool) is None]
    if not absent:
        return []
    return [Problem("nodes", f"this machine has no {', '.join(f'`{tool}`' for tool in absent)} on PATH: every host "
                             "step dials its node with the OpenSSH client from here; install it (`apt-get install "
                             "openssh-client`, `dnf install openssh-clients`, `apk add openssh-client`) and run "
                             "again; nothing was changed")]
