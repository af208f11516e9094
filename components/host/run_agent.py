"""The run's own SSH agent: the stack's key loaded once per `pulumi up`, so that the steps that only ever run while
the program does (install, the reboot wait, the NPU network, verify) need no copy of the key in the state.

A step's create or update runs while the program is alive: the SDK's RegisterResource returns once the engine has
run it, and the program waits for every such call before it exits. Only a delete runs without the program (a node
removed, `pulumi destroy`), and only the destroy step has one: it keeps the key on its stdin.
"""
from __future__ import annotations

import atexit
import hashlib

import pulumi
from pulumi.runtime import settings
from pulumi.runtime.mocks import MockMonitor

from components.config import StackSpec
from components.runner import agent
from components.runner.agent import AGENT_ENV

# Beside the rendered scripts, relative like them: the command provider runs in the project folder, and a path that
# names no checkout stays the same from run to run, so it is never a diff. The agent's folder is its owner's alone.
SOCKETS = ".ascend-npu/agent"
_RUNNING: dict[str, agent.Agent] = {}
_MADE: dict[tuple[int, int], pulumi.Output[str]] = {}


def socket_path(project: str, stack: str) -> str:
    """The agent's socket for this stack: one per stack, so two stacks of one folder run side by side."""
    return f"{SOCKETS}/{hashlib.sha256(f'{project}/{stack}'.encode()).hexdigest()[:12]}.sock"


def agent_environment(spec: StackSpec) -> dict[str, pulumi.Output[str]]:
    """SSH_AUTH_SOCK of the run's agent for a step, when the stack has a key (with ssh.useAgent, the steps inherit
    the caller's own SSH_AUTH_SOCK instead)."""
    return {AGENT_ENV: agent_socket(spec.ssh_private_key)} if spec.ssh_private_key is not None else {}


def agent_socket(key: pulumi.Input[str]) -> pulumi.Output[str]:
    """The socket for the steps of this run: known at once in a preview, which dials nothing; in an `up`, once the
    agent holds KEY. Not a secret: the path tells nothing, and a secret would hide the steps' environment."""
    monitor = settings.get_monitor()
    run = (id(key), id(monitor))
    if run not in _MADE:
        _MADE.clear()
        path = socket_path(pulumi.get_project(), pulumi.get_stack())
        # Decided now, while the run's settings hold: the apply may run after they changed (a test's next program).
        starts = not pulumi.runtime.is_dry_run() and not isinstance(monitor, MockMonitor)
        _MADE[run] = pulumi.Output.unsecret(pulumi.Output.from_input(key).apply(
            lambda text: ensure(path, text) if starts else path))
    return _MADE[run]


def ensure(path: str, key: str) -> str:
    """PATH, once the agent of this run holds KEY there (in an `up`; a preview, or the offline plan, starts none)."""
    if path not in _RUNNING:
        try:
            _RUNNING[path] = agent.start(path, key)
        except agent.AgentError as error:
            raise agent.AgentError(f"{error}; no install, verify or NPU network step ran") from None
    return path


def stop() -> None:
    """Every agent this process started, stopped and its socket removed."""
    for path, running in list(_RUNNING.items()):
        agent.stop(running)
        del _RUNNING[path]
    _MADE.clear()


atexit.register(stop)
