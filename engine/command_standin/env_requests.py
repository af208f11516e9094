"""Stand-in for pulumi-command: which env requests the node's sshd refuses, as x/crypto's Setenv learns it."""
# pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/remote/commandOutputs.go:42-71 sends each `environment`
# entry with session.Setenv, which asks for a reply (golang.org/x/crypto v0.48.0 ssh/session.go:167-177: "ssh: setenv
# failed"); a refused entry fails the step ("could not set environment variable", commandOutputs.go:110-126), a
# refused PULUMI_COMMAND_STDOUT/STDERR is a warning only. OpenSSH's client sends `env` requests asking no reply
# (clientloop.c client_send_env: want-reply 0), so its SendEnv never learns which ones sshd refused (session.c
# session_env_req: a name no AcceptEnv pattern matches is ignored, answered as a failure). So before the command, one
# session on the same connection sends the names with a random value and prints those that did not arrive.
from __future__ import annotations

import os
import secrets
import shlex
import subprocess
from typing import Callable

from .ssh import Link, forget

PREVIOUS_OUTPUT = ("PULUMI_COMMAND_STDOUT", "PULUMI_COMMAND_STDERR")
# commandOutputs.go:112-114, logged at Error for `environment`, at Warning for the previous output.
UNABLE = ("Unable to set '{}'. This only works if your SSH server is configured to accept\n\tthese variables via "
          "AcceptEnv. Alternatively, if a Bash-like shell runs the command on the remote host, you could\n\tprefix "
          "the command itself with the variables in the form 'VAR=value command'")


class Refused(Exception):
    """An `environment` entry sshd refused: the step fails before its command runs."""


def refused_names(link: Link, names: list[str]) -> set[str]:
    """The NAMES the node's sshd does not take as env requests (a name its own SetEnv overrides reads as refused)."""
    if not names:
        return set()
    token = secrets.token_hex(8)
    probe = "; ".join(f"[ \"$(printenv {shlex.quote(n)})\" = {token} ] || echo {shlex.quote(n)}" for n in names)
    proc = link.client(["-o", f"SendEnv={' '.join(names)}"], [probe], env={**os.environ, **{n: token for n in names}},
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out, _ = proc.communicate()
    finally:
        forget(proc)
    return set(out.decode(errors="replace").split()) & set(names)


def check(link: Link, environment: dict, env: dict[str, str], log: Callable[[str], None]) -> None:
    """Refused when sshd refuses an `environment` entry; a refused previous output is only said."""
    refused = refused_names(link, list(env))
    for name in environment:
        if name in refused:
            log(UNABLE.format(name))
            raise Refused(f'could not set environment variable "{name}": ssh: setenv failed')
    for name in PREVIOUS_OUTPUT:
        if name in refused:
            log("warning: " + UNABLE.format(name))
