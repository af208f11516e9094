"""OpenSSH's `ssh-agent` holding the stack's key, the one way a host step's `ssh` gets it.

The program starts one per `pulumi up` (components/host/run_agent.py): the steps that run only while it runs take the
key from there. A step whose key comes on its stdin (the destroy, whose delete runs without the program) starts one
of its own for as long as it runs. Either way the key is added from memory (`ssh-add -`) and never touches a disk.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

AGENT_ENV = "SSH_AUTH_SOCK"
START_TIMEOUT = 10.0


class AgentError(RuntimeError):
    """The agent could not start or refused the key."""


@dataclass(frozen=True)
class Agent:
    """A started agent: its socket, its pid, and the shell it watches."""

    path: str
    pid: int
    watch: subprocess.Popen


def start(path: str, key: str) -> Agent:
    """`ssh-agent -a PATH sh -c ...` holding KEY: the agent watches the shell and leaves when it does (OpenSSH V_9_2_P1
    ssh-agent.c L2245-2246, L2261-2262, L1976-1987), and the shell reads a pipe this process holds, so both go when
    this process does, however it ends. PR_SET_PDEATHSIG cannot: ssh-agent is set-group-ID on Debian, whose exec
    clears it."""
    folder = Path(path).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    with suppress(FileNotFoundError):  # left by a run that was killed
        os.unlink(path)
    try:
        watch = subprocess.Popen(["ssh-agent", "-a", path, "sh", "-c", 'echo "$SSH_AGENT_PID"; exec cat >/dev/null'],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError as error:
        raise AgentError(f"sshPrivateKey: cannot start ssh-agent ({error}); install openssh-client") from None
    pid = watch.stdout.readline().strip() if watch.stdout else ""
    if not pid.isdigit():
        watch.kill()
        raise AgentError(f"sshPrivateKey: ssh-agent did not start at {path}: {watch.communicate()[1].strip()}")
    agent = Agent(path, int(pid), watch)
    added = subprocess.run(["ssh-add", "-q", "-"], input=key if key.endswith("\n") else key + "\n", text=True,
                           capture_output=True, env={**os.environ, AGENT_ENV: path, "SSH_ASKPASS_REQUIRE": "never"},
                           timeout=START_TIMEOUT)
    if added.returncode != 0:
        stop(agent)
        raise AgentError("sshPrivateKey: ssh-add could not load it (" + " ".join(added.stderr.split()) + "): write "
                         "a private key without a passphrase, as `ssh -i` reads it")
    return agent


def stop(agent: Agent) -> None:
    """The agent stopped, its watch ended and its socket removed (the agent changes to / before it would remove
    it: ssh-agent.c L2224, V_9_2_P1)."""
    with suppress(ProcessLookupError):  # a zombie until its watch ends: the pid is never another's
        os.kill(agent.pid, signal.SIGTERM)
    if agent.watch.stdin:
        agent.watch.stdin.close()
    agent.watch.wait()
    with suppress(FileNotFoundError):
        os.unlink(agent.path)


@contextmanager
def holding(key: str) -> Iterator[str]:
    """An agent of this process's own holding KEY, in a folder only its owner can open; its socket's path."""
    folder = tempfile.mkdtemp(prefix="ascend-npu-agent-")
    agent = start(os.path.join(folder, "agent.sock"), key)
    try:
        yield agent.path
    finally:
        stop(agent)
        with suppress(OSError):
            os.rmdir(folder)
