"""The local command lines that run a node's host steps through OpenSSH (node_step.py) and its reboot wait."""
from __future__ import annotations

import json
import shlex
from typing import Optional

import pulumi
from pulumi.runtime import settings

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.drain.contract import PYTHON
from components.host.commands import HostStep
from components.host.node_step import ON_DESTROY, ON_NODE
from components.host.script_set import local_script_set, stored


def hostport(host: str, port: int) -> str:
    """`HOST:PORT`, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def endpoint_args(spec: StackSpec, node: NodeSpec, run_agent: bool = False) -> list[str]:
    """Where to dial and the pins: the node, the bastion when there is one, `--agent` without a stack key or with
    RUN_AGENT (the run's agent holds it: run_agent.py)."""
    ssh = spec.ssh
    args = ["--node", node.name, "--address", hostport(node.address, ssh.port), "--user", ssh.user,
            "--host-key", node.host_key]
    if ssh.bastion is not None:
        bastion = ssh.bastion
        args += ["--bastion", hostport(bastion.host, bastion.port), "--bastion-user", bastion.user or ssh.user,
                 "--bastion-host-key", bastion.host_key]
    if spec.ssh_private_key is None or run_agent:
        args.append("--agent")
    return args


def step_command(spec: StackSpec, node: NodeSpec, step: HostStep, upload: str = "",
                 run_agent: bool = False) -> tuple[str, dict[str, str]]:
    """The local command of STEP and its environment: `exec PYTHON -m components.host.node_step ...`, which stages
    the scripts the step's command names (and with UPLOAD, packages.directory, the installers it names) and runs it;
    the command itself in the environment (its inlined script by name: script_set.stored), where it needs no second
    quoting; never the key (on stdin, or with RUN_AGENT in the run's agent)."""
    args = ["--step", step.name, *endpoint_args(spec, node, run_agent), "--scripts", local_script_set()]
    if upload:
        args += ["--upload", upload]
    return f"exec {PYTHON} -m components.host.node_step " + " ".join(shlex.quote(a) for a in args), \
        {ON_NODE: stored(step.create)}


def destroy_command(spec: StackSpec, node: NodeSpec, step: HostStep) -> tuple[str, dict[str, str]]:
    """The local command that runs STEP's `delete` (the node's destroy, run_destroy.sh) on the node, and the
    environment that holds it; it stages nothing: the record step took the scripts a destroy runs."""
    args = ["--step", step.name, *endpoint_args(spec, node), "--command-from", ON_DESTROY]
    return f"exec {PYTHON} -m components.host.node_step " + " ".join(shlex.quote(a) for a in args), \
        {ON_DESTROY: stored(step.delete or "")}


# The key-only stdin of the stack being built (by its key and the engine it registers with): the same for every step
# of every node, so made once.
_KEY_ONLY: dict[tuple[int, int], pulumi.Output[str]] = {}


def step_stdin(spec: StackSpec, stdin: pulumi.Input[str] | None = None,
               with_key: bool = True) -> Optional[pulumi.Output[str]]:
    """The step's stdin, a secret: the stack's key (WITH_KEY) and what the command reads (the mirror login); None
    when empty."""
    key = spec.ssh_private_key if with_key else None
    if key is None and stdin is None:
        return None
    if stdin is None:
        run = (id(key), id(settings.get_monitor()))
        if run not in _KEY_ONLY:
            _KEY_ONLY.clear()
            _KEY_ONLY[run] = pulumi.Output.secret(pulumi.Output.from_input(key).apply(
                lambda text: json.dumps({"key": text})))
        return _KEY_ONLY[run]
    return pulumi.Output.secret(pulumi.Output.all(key, stdin).apply(
        lambda given: json.dumps({name: text for name, text in zip(("key", "stdin"), given) if text})))
