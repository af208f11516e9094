"""SSH connections a stack's rollout holds at once, and whether this machine lets a `pulumi destroy` of it through."""
from __future__ import annotations

import os
import resource
from typing import Optional

from components.config import StackSpec

# A node's host steps that can run at the same moment: after its install, its destroy record beside its reboot wait,
# npu-network or verify (components/host/component.py); the rest of its steps wait for one another.
STEPS_AT_ONCE_PER_NODE = 2
# Descriptors the provider holds besides its SSH connections (the engine's gRPC, pipes, logs): a margin.
MARGIN = 256


def default_parallel() -> int:
    """`pulumi up`'s default --parallel: 4 x the CPUs (pulumi pkg/cmd/pulumi/operations/up.go L71-88)."""
    return 4 * (os.cpu_count() or 1)


def peak_connections(spec: StackSpec, parallel: int) -> int:
    """SSH connections a rollout holds at once: each host step's `ssh` ends with the step (node_step.py), so at most
    one per step running, bounded by the engine's --parallel and by the nodes of one wave."""
    widest = max((len(wave) for wave in _waves(spec)), default=0)
    return min(parallel, STEPS_AT_ONCE_PER_NODE * widest)


def _waves(spec: StackSpec):
    from components.host.rollout import plan_waves
    return plan_waves(spec.nodes, spec.canaries, spec.rollout.max_parallel)


def destroy_connections(nodes: int) -> int:
    """Connections held at the end of a run that removes NODES nodes: each node's destroy is the remote command
    older releases stored, and pulumi-command v1.2.1 closes neither its client nor its bastion client until it
    exits (remote/commandOutputs.go L31-40, remote/connection.go L211-242); one TCP connection here each way."""
    return nodes


def provider_limit() -> Optional[int]:
    """The open files a Go provider may hold: it raises its soft limit to the hard one, less one, at start (Go 1.26
    src/syscall/rlimit.go L30-47), so the hard limit here, which it inherits, is what counts. None: unlimited."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if hard == resource.RLIM_INFINITY else hard - 1


def shortfall(spec: StackSpec, limit: Optional[int]) -> Optional[str]:
    """What to do when LIMIT is below what a `pulumi destroy` of every node holds open; None when it is enough."""
    held = destroy_connections(len(spec.nodes))
    needed = held + MARGIN
    if limit is None or limit >= needed:
        return None
    where = "to the bastion" if spec.ssh.bastion is not None else "to the nodes"
    return (f"a `pulumi destroy` of all {len(spec.nodes)} nodes (or an `up` that removes them) holds {held} SSH "
            f"connections {where} open until it ends (each node's destroy is a pulumi-command v1.2.1 remote "
            f"command, which closes none before), and this machine lets a process open {limit} files: the last "
            f"nodes would fail with `too many open files`. Raise the hard limit for the shell or CI job that runs "
            f"pulumi to at least {needed} (`ulimit -Hn {needed}` as root, `LimitNOFILE={needed}` in a systemd "
            "unit), or remove fewer nodes per run (docs/day-2.md)")
