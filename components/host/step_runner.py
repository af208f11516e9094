"""The local command lines of a node's host steps (components/runner's contract), their environment and stdin."""
from __future__ import annotations

import json
from typing import Optional

import pulumi
from pulumi.runtime import settings

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.host.commands import HostStep
from components.host.script_set import rendered
from components.runner.contract import ON_NODE, Endpoint, RunnerCall


def runner_call(spec: StackSpec, node: NodeSpec, step: str, upload: str = "", timeout: int = 0) -> RunnerCall:
    """STEP of NODE as the runner's current contract writes it: where to dial and the pins, the bastion when there
    is one; never the key."""
    ssh = spec.ssh
    bastion = None
    if ssh.bastion is not None:
        bastion = Endpoint(ssh.bastion.host, ssh.bastion.port, ssh.bastion.user or ssh.user, ssh.bastion.host_key)
    return RunnerCall(step=step, node=node.name, target=Endpoint(node.address, ssh.port, ssh.user, node.host_key),
                      bastion=bastion, upload=upload, timeout=timeout)


def step_command(spec: StackSpec, node: NodeSpec, step: HostStep, upload: str = "") -> tuple[str, dict[str, str]]:
    """The local command of STEP and its environment: the runner's line, which stages the scripts the step's call
    names (rendered here first; with UPLOAD, packages.directory, the installers it names) and runs the call, which
    the environment holds (ON_NODE), where it needs no second quoting."""
    for script, _ in step.call.scripts:
        rendered(script)
    return runner_call(spec, node, step.name, upload).line(), {ON_NODE: step.call.stored()}


def destroy_command(spec: StackSpec, node: NodeSpec) -> str:
    """The destroy step's delete: the node's destroy (run_destroy.sh), the same line for every setting."""
    return runner_call(spec, node, "destroy").line()


# The key-only stdin of the stack being built (by its key and the engine it registers with), made once.
_KEY_ONLY: dict[tuple[int, int], pulumi.Output[str]] = {}


def step_stdin(spec: StackSpec, key: bool = False, stdin: pulumi.Input[str] | None = None
               ) -> Optional[pulumi.Output[str]]:
    """The step's stdin as the runner reads it (JSON), a secret: with KEY the stack's key (`key`: the destroy's
    alone, whose delete runs without the program and its agent), and what the node command reads (`stdin`: the
    mirror login); None when empty."""
    secret = spec.ssh_private_key if key else None
    if secret is None and stdin is None:
        return None
    if stdin is None:
        run = (id(secret), id(settings.get_monitor()))
        if run not in _KEY_ONLY:
            _KEY_ONLY.clear()
            _KEY_ONLY[run] = pulumi.Output.secret(pulumi.Output.from_input(secret).apply(
                lambda text: json.dumps({"key": text})))
        return _KEY_ONLY[run]
    return pulumi.Output.secret(pulumi.Output.all(secret, stdin).apply(
        lambda given: json.dumps({name: text for name, text in zip(("key", "stdin"), given) if text})))
