"""A node's drain steps as local commands: cordon and evict before its host steps, uncordon after, and on leave."""
from __future__ import annotations

from dataclasses import dataclass

from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec
from components.drain.contract import PYTHON, REASON_ENV, DrainCall

__all__ = ["PYTHON", "REASON_ENV", "DrainSteps", "drain_reason", "drain_steps"]


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


def drain_call(spec: StackSpec, node: NodeSpec, step: str) -> DrainCall:
    """The node's call of STEP. Leaving evicts only when the node's NPU software is uninstalled after it: a driver
    left in place keeps running Pods running, with or without the device plugin."""
    drain = spec.rollout.drain
    return DrainCall(step=step, node=node.name, context=spec.cluster.kube_context or None, timeout=drain.timeout,
                     selector=drain.pod_selector, force=drain.force, delete_empty_dir_data=drain.delete_empty_dir_data,
                     grace_period=drain.grace_period_seconds, evict=spec.rollout.uninstall_on_destroy,
                     reason=drain_reason(spec, node))


def drain_steps(spec: StackSpec, node: NodeSpec) -> DrainSteps:
    """The node's drain commands; the reason travels in the environment, so `pulumi preview --diff` shows it."""
    calls = {step: drain_call(spec, node, step) for step in ("before-host", "after-host", "leave")}
    return DrainSteps(drain=calls["before-host"].command(), uncordon=calls["after-host"].command(),
                      leave=calls["leave"].command(), environment=calls["before-host"].environment())
