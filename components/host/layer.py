"""The host layer in rollout order: each wave starts only when every node of the previous wave verified."""
from __future__ import annotations

import pulumi

from components.host.component import AscendHost, AscendHostArgs
from components.rollout import plan_waves
from components.spec import StackSpec


def build_hosts(name: str, spec: StackSpec, parent: pulumi.Resource) -> tuple[list[list[str]], dict[str, AscendHost]]:
    """(waves of node names, node name -> AscendHost); wave k+1's first steps depend on wave k's verify steps.

    The edge is drawn between the commands themselves: Pulumi does not hand a component's
    `depends_on` down to its children.
    """
    waves = plan_waves(spec.nodes, spec.canaries, spec.rollout.max_parallel)
    hosts: dict[str, AscendHost] = {}
    previous: list[pulumi.Resource] = []
    for wave in waves:
        for node in wave:
            hosts[node.name] = AscendHost(f"{name}-{node.name}", AscendHostArgs(spec=spec, node=node, after=previous),
                                          opts=pulumi.ResourceOptions(parent=parent))
        previous = [hosts[n.name].verify for n in wave]
    return [[n.name for n in wave] for wave in waves], hosts
