"""What the engine itself takes from this machine before anything runs: the upload directory and its files, the
SSH agent of this environment, and the OpenSSH client the reboot wait dials with."""
from __future__ import annotations

import shutil
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
    """The SSH agent is used exactly when the stack says so. Beside sshPrivateKey, pulumi-command v1.2.1 dials the
    agent of a non-empty SSH_AUTH_SOCK for every connection and fails the dial when it cannot (remote/connection.go
    L131-145, connection_unix.go L12-21), yet never offers its keys: x/crypto tries each method name once, and the
    key and the agent are both "publickey" (ssh/client_auth.go L86-110, L220 at v0.48.0)."""
    socket = environ.get("SSH_AUTH_SOCK", "")
    if spec.ssh_private_key is not None and socket:
        return [Problem("sshPrivateKey", "is set while SSH_AUTH_SOCK is too: the command provider would connect to "
                                         "that agent for every SSH connection and never offer its keys beside the "
                                         "stack's, so it adds nothing, and an agent that is gone (a stale "
                                         "SSH_AUTH_SOCK) fails every step before SSH starts; run "
                                         f"`SSH_AUTH_SOCK= pulumi {command}`, or use the agent alone "
                                         "(ssh.useAgent: true, no sshPrivateKey)")]
    if spec.ssh.use_agent and not socket:
        return [Problem("ssh.useAgent", "true, but SSH_AUTH_SOCK is not set here: start an agent and add the key "
                                        "(`eval $(ssh-agent) && ssh-add KEYFILE`), or set sshPrivateKey instead")]
    return []


def openssh_problems(spec: StackSpec, which: Callable[[str], Optional[str]] = shutil.which) -> list[Problem]:
    """With `rollout.allowReboot`, the wait for a rebooting node dials it with OpenSSH from this machine
    (components/host/reboot_wait.py)."""
    if not spec.rollout.allow_reboot or which("ssh") is not None:
        return []
    return [Problem("rollout.allowReboot", "true, and this machine has no `ssh` "
                                           "on PATH: the wait for a rebooting node dials it with OpenSSH from here; "
                                           "install the OpenSSH client (`apt-get install openssh-client`, "
                                           "`dnf install openssh-clients`), or write false")]
