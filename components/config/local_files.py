"""What the engine itself takes from this machine before anything runs: the upload directory and its files, and the
SSH agent of this environment."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

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
    """The SSH agent is used exactly when the stack says so: pulumi-command v1.2.1 offers an agent's keys whenever
    SSH_AUTH_SOCK is non-empty in its environment (this one), after sshPrivateKey's
    (provider/pkg/provider/remote/connection.go, connection_unix.go tryGetDefaultAgentSocket)."""
    socket = environ.get("SSH_AUTH_SOCK", "")
    if spec.ssh_private_key is not None and socket:
        return [Problem("sshPrivateKey", "is set while SSH_AUTH_SOCK is too: the command provider would also offer "
                                         "the agent's keys, so a node that refuses the stack's key could still let "
                                         f"in another one; run `SSH_AUTH_SOCK= pulumi {command}`, or use the agent "
                                         "alone (ssh.useAgent: true, no sshPrivateKey)")]
    if spec.ssh.use_agent and not socket:
        return [Problem("ssh.useAgent", "true, but SSH_AUTH_SOCK is not set here: start an agent and add the key "
                                        "(`eval $(ssh-agent) && ssh-add KEYFILE`), or set sshPrivateKey instead")]
    return []
