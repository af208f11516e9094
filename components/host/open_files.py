"""How many SSH connections a stack's rollout holds at once: each host step's `ssh` ends with the step."""
from __future__ import annotations

import os

from components.config import StackSpec
from components.host.rollout import plan_waves

# A node's host steps that can run at the same moment: after its install, its destroy step (the record) beside its
# reboot wait, npu-network or verify (components/host/component.py); its other steps wait for one another.
STEPS_AT_ONCE_PER_NODE = 2


def default_parallel() -> int:
    """`pulumi up`'s default --parallel: 4 x the CPUs (pulumi pkg/cmd/pulumi/operations/up.go L71-88)."""
    return 4 * (os.cpu_count() or 1)


def peak_connections(spec: StackSpec, parallel: int) -> int:
    """SSH connections a rollout holds at once: one per host step running (node_step.py), so at most the engine's
    --parallel and two per node of the widest wave. A destroy runs one step per node, at most --parallel at once."""
    waves = plan_waves(spec.nodes, spec.canaries, spec.rollout.max_parallel)
    return min(parallel, STEPS_AT_ONCE_PER_NODE * max((len(wave) for wave in waves), default=0))
