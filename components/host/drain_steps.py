"""A node's drain steps as local commands: cordon and evict before its host steps, uncordon after, drain on leave."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec

# Run from the project folder (where the CLI starts its providers) with the stack's virtualenv, as Pulumi.yaml's
# `virtualenv` names it; ASCEND_NPU_PYTHON overrides it without changing the command, so no diff follows.
PYTHON = '"${ASCEND_NPU_PYTHON:-.venv/bin/python}"'
REASON_ENV = "ASCEND_NPU_DRAIN_FOR"


@dataclass(frozen=True)
class DrainSteps:
    """The `drain` command (before the host steps), the `uncordon` one (after) and its delete (the node leaves)."""

    drain: str
    uncordon: str
    leave: str
    environment: dict[str, str]


def drain_reason(spec: StackSpec, node: NodeSpec) -> str:
    """What the host steps install that stops running NPU work when it changes: the driver and firmware, and on a
    Docker node the runtime and default-runtime setting (a docker restart stops its containers without
    live-restore, which the stack cannot see)."""
    v = spec.versions
    parts = [f"driver {v.driver}", f"firmware {v.firmware}"]
    if node.container_runtime is ContainerRuntime.DOCKER:
        parts += [f"docker runtime {v.docker_runtime}",
                  f"default runtime {'ascend' if spec.cluster.ascend_default_runtime else 'runc'}"]
    return ", ".join(parts)


def _command(step: str, spec: StackSpec, node: NodeSpec, evicts: bool) -> str:
    args = ["-m", "components.drain", step, "--node", node.name]
    if spec.cluster.kube_context:
        args += ["--context", spec.cluster.kube_context]
    drain = spec.rollout.drain
    if evicts:
        args += ["--timeout", str(drain.timeout)] + (["--selector", drain.pod_selector] if drain.pod_selector else [])
    return f"exec {PYTHON} " + " ".join(shlex.quote(a) for a in args)


def drain_steps(spec: StackSpec, node: NodeSpec) -> DrainSteps:
    """The node's drain commands; the reason travels in the environment, so `pulumi preview --diff` shows it."""
    return DrainSteps(drain=_command("before-host", spec, node, True),
                      uncordon=_command("after-host", spec, node, False),
                      leave=_command("leave", spec, node, True),
                      environment={REASON_ENV: drain_reason(spec, node)})
