"""Whether this machine lets the command provider keep open every SSH connection one `up` of the stack can open."""
from __future__ import annotations

import resource
from typing import Optional

from components.config import StackSpec
from components.config.packages import Source

# Each node's remote commands: install, verify, on-destroy. pulumi-command v1.2.1 closes none of their clients, and
# no bastion client of any step, until it exits (remote/commandOutputs.go L31-40, remote/connection.go L211-242);
# a copy closes its target client (remote/copyController.go L169-173).
COMMANDS_PER_NODE = 3
# Descriptors the provider holds besides its SSH connections (the engine's gRPC, pipes, logs): a margin.
MARGIN = 256


def held_connections(spec: StackSpec) -> int:
    """This machine's connections the provider holds at the end of an `up` that runs every host step."""
    copies = 2 if spec.packages.source is Source.UPLOAD else 1
    per_node = COMMANDS_PER_NODE + (copies if spec.ssh.bastion is not None else 0)
    networked = sum(1 for node in spec.nodes if node.npu_network)  # their npu-network step
    return per_node * len(spec.nodes) + networked


def provider_limit() -> Optional[int]:
    """The open files a Go provider may hold: it raises its soft limit to the hard one, less one, at start (Go 1.26
    src/syscall/rlimit.go L30-47), so the hard limit here, which it inherits, is what counts. None: unlimited."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if hard == resource.RLIM_INFINITY else hard - 1


def shortfall(spec: StackSpec, limit: Optional[int]) -> Optional[str]:
    """What to do when LIMIT is below what a full rollout of the stack holds open; None when it is enough."""
    held = held_connections(spec)
    needed = held + MARGIN
    if limit is None or limit >= needed:
        return None
    where = "to the bastion" if spec.ssh.bastion is not None else "to the nodes"
    return (f"a rollout of all {len(spec.nodes)} nodes holds {held} SSH connections {where} open until `pulumi up` "
            f"ends (pulumi-command v1.2.1 closes none before), and this machine lets a process open {limit} files: "
            f"the last nodes would fail with `too many open files`. Raise the hard limit for the shell or CI job "
            f"that runs `pulumi up` to at least {needed} (`ulimit -Hn {needed}` as root, `LimitNOFILE={needed}` in a "
            "systemd unit), or roll out fewer nodes per `up`")
