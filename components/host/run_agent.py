"""The run's own SSH agent: the stack's key loaded once per `pulumi up`, so that the steps that only ever run while
the program does (install, verify, the NPU network) need no copy of the key in the state.

A step's create or update runs while the program is alive: the SDK's RegisterResource returns once the engine has
run it, and the program waits for every such call before it exits. Only a delete runs without the program (a node
removed, `pulumi destroy`), and only the destroy step has one: it keeps the key on its stdin.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import signal
import subprocess
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pulumi
from pulumi.runtime import settings

# Beside the rendered scripts (script_set.py), relative like them: the command provider runs in the project folder,
# and a path that names no checkout stays the same from run to run, so it is never a diff.
SOCKETS = ".ascend-npu/agent"
AGENT_ENV = "SSH_AUTH_SOCK"
START_TIMEOUT = 10.0
_RUNNING: dict[str, "Agent"] = {}
_MADE: dict[tuple[int, int], pulumi.Output[str]] = {}


@dataclass(frozen=True)
class Agent:
    """A started agent: its pid, and the shell it watches."""

    pid: int
    watch: subprocess.Popen


class AgentError(RuntimeError):
    """The agent could not start or refused the key."""


def socket_path(project: str, stack: str) -> str:
    """The agent's socket for this stack: one per stack, so two stacks of one folder run side by side."""
    return f"{SOCKETS}/{hashlib.sha256(f'{project}/{stack}'.encode()).hexdigest()[:12]}.sock"


def agent_socket(key: pulumi.Input[str]) -> pulumi.Output[str]:
    """SSH_AUTH_SOCK for the steps of this run: known at once in a preview, which dials nothing; in an `up`, once
    the agent holds KEY. Not a secret: the path tells nothing, and a secret would hide the steps' environment."""
    run = (id(key), id(settings.get_monitor()))
    if run not in _MADE:
        _MADE.clear()
        path = socket_path(pulumi.get_project(), pulumi.get_stack())
        _MADE[run] = pulumi.Output.unsecret(pulumi.Output.from_input(key).apply(lambda text: _ready(path, text)))
    return _MADE[run]


def _ready(path: str, key: str) -> str:
    if not pulumi.runtime.is_dry_run() and path not in _RUNNING:
        start(path, key)
    return path


def start(path: str, key: str) -> None:
    """`ssh-agent -a PATH sh -c ...`: the agent watches the shell and leaves when it does (OpenSSH 9.2p1
    ssh-agent.c L2245-2246, L2261-2262, L1976-1987), and the shell reads a pipe this process holds, so both go when
    the program does, however it ends. PR_SET_PDEATHSIG cannot: ssh-agent is set-group-ID on Debian, whose exec
    clears it. KEY is added from stdin: it never touches the disk."""
    folder = Path(path).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    with suppress(FileNotFoundError):  # left by a run that was killed; the stack's lock says none is running
        os.unlink(path)
    # Relative, as the steps dial it: an absolute path can pass the 108 bytes a socket's path may have. The agent
    # changes to / before it would remove it (ssh-agent.c L2222), so stop() does.
    watch = subprocess.Popen(["ssh-agent", "-a", path, "sh", "-c",
                              'echo "$SSH_AGENT_PID"; exec cat >/dev/null'],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = watch.stdout.readline().strip() if watch.stdout else ""
    if not pid.isdigit():
        watch.kill()
        raise AgentError(f"sshPrivateKey: ssh-agent did not start at {path}: {watch.communicate()[1].strip()}")
    _RUNNING[path] = Agent(int(pid), watch)
    added = subprocess.run(["ssh-add", "-q", "-"], input=key if key.endswith("\n") else key + "\n", text=True,
                           capture_output=True, env={**os.environ, AGENT_ENV: path,
                                                     "SSH_ASKPASS_REQUIRE": "never"}, timeout=START_TIMEOUT)
    if added.returncode != 0:
        stop()
        raise AgentError("sshPrivateKey: ssh-add could not load it (" + " ".join(added.stderr.split()) + "): write "
                         "a private key without a passphrase, as `ssh -i` reads it; no install, verify or NPU "
                         "network step ran")


def stop() -> None:
    """Every agent this process started, stopped, its watch ended and its socket removed."""
    for path, agent in list(_RUNNING.items()):
        with suppress(ProcessLookupError):  # a zombie until its watch ends: the pid is never another's
            os.kill(agent.pid, signal.SIGTERM)
        if agent.watch.stdin:
            agent.watch.stdin.close()
        agent.watch.wait()
        with suppress(FileNotFoundError):
            os.unlink(path)
        del _RUNNING[path]
    _MADE.clear()


atexit.register(stop)
