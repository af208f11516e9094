"""The host layer in rollout order: each wave starts only when every node of the previous wave verified."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import pulumi

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.host.component import AscendHost, AscendHostArgs
from components.host.rollout import gate_waves, plan_waves


@dataclass
class HostLayer:
    """The waves (node names), the hosts built so far, and an output that resolves once every wave is built."""

    waves: list[list[str]]
    hosts: dict[str, AscendHost]
    built: pulumi.Output[None]


def build_hosts(name: str, spec: StackSpec, parent: pulumi.Resource,
                on_host: Callable[[NodeSpec, AscendHost], None]) -> HostLayer:
    """Every node's AscendHost, wave by wave; wave k+1's first steps depend on `<name>-wave-<k>`, which depends on
    wave k's last steps.

    The edge is drawn between the commands themselves: Pulumi does not hand a component's
    `depends_on` down to its children. `on_host` runs as each host is built (its node's labels).
    """
    waves = plan_waves(spec.nodes, spec.canaries, spec.rollout.max_parallel)
    hosts: dict[str, AscendHost] = {}

    index = {node.name: k for k, wave in enumerate(waves) for node in wave}

    def build_wave(wave: Sequence[NodeSpec], after: list[pulumi.Resource]) -> list[pulumi.Resource]:
        for node in wave:
            # A renamed node keeps its steps: every child's name starts with the host's, so the SDK derives
            # each child's alias from these; without them the old steps are deleted, which runs the uninstaller
            # (rollout.uninstallOnDestroy) on a server that stays in the stack.
            aliases = [pulumi.Alias(name=f"{name}-{old}") for old in node.previous_names]
            host = AscendHost(f"{name}-{node.name}", AscendHostArgs(spec=spec, node=node, after=after,
                                                                                wave=index[node.name]),
                              opts=pulumi.ResourceOptions(parent=parent, aliases=aliases))
            hosts[node.name] = host
            on_host(node, host)
        return [hosts[node.name].ready for node in wave]

    def close_wave(index: int, gates: list[pulumi.Resource]) -> pulumi.Resource:
        # A Stash, the engine's own resource: no provider, nothing runs, a delete that does nothing (pulumi
        # v3.274.0 pkg/resource/deploy/builtins.go). It holds the wave's node names, so a preview shows a wave
        # that changed.
        return pulumi.Stash(f"{name}-wave-{index}", input=[node.name for node in waves[index]],
                            opts=pulumi.ResourceOptions(parent=parent, depends_on=gates))

    built = gate_waves(waves, build_wave, close_wave)
    return HostLayer([[n.name for n in wave] for wave in waves], hosts, built)
