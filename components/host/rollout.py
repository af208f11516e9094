"""Rollout order: canaries first, then waves of at most `maxParallel` nodes, each gated on the one before; and the
SSH connections such a rollout holds at once."""
from __future__ import annotations

import asyncio
import os
from itertools import groupby
from typing import Callable, Sequence, TypeVar

import pulumi

# The SDK's dependency-only resource (a URN, no dependencies, never registered), the form it builds for
# resource references. What the gate relies on (the same engine edge, a cycle check that stops at it) is
# pinned by tests/test_rollout_gate.py, which fails loudly if an SDK release changes either.
from pulumi.resource import DependencyResource

from components.config.hosts import NodeSpec

Item = TypeVar("Item")
# A node's host steps that can run at the same moment: after its install, its destroy step (the record) beside its
# reboot wait, npu-network or verify (components/host/component.py); its other steps wait for one another.
STEPS_AT_ONCE_PER_NODE = 2
# Builds one wave's resources, each first step depending on `after`; returns the wave's gates (its last steps).
WaveBuilder = Callable[[Sequence[Item], list[pulumi.Resource]], list[pulumi.Resource]]
# Builds the resource that closes wave K (its index): it depends on the wave's gates, and the next wave on it alone.
WaveCloser = Callable[[int, list[pulumi.Resource]], pulumi.Resource]


def _chunks(nodes: list[NodeSpec], size: int) -> list[tuple[NodeSpec, ...]]:
    return [tuple(nodes[i:i + size]) for i in range(0, len(nodes), size)]


def plan_waves(nodes: tuple[NodeSpec, ...], canaries: tuple[str, ...], max_parallel: int) -> list[tuple[NodeSpec, ...]]:
    """Waves in order: the canaries, then nodes by their `wave` number, then the rest in config order.

    Every wave holds at most `max_parallel` nodes; a group larger than that is split in config order.
    """
    canary_nodes = [n for n in nodes if n.name in canaries]
    others = [n for n in nodes if n.name not in canaries]
    numbered = sorted((n for n in others if n.wave is not None), key=lambda n: n.wave or 0)
    unnumbered = [n for n in others if n.wave is None]
    waves = _chunks(canary_nodes, max_parallel)
    for _, group in groupby(numbered, key=lambda n: n.wave):
        waves += _chunks(list(group), max_parallel)
    waves += _chunks(unnumbered, max_parallel)
    return waves


async def registered_urns(gates: Sequence[pulumi.Resource]) -> list[str]:
    """The URNs the engine gave the gates; a URN is known in preview too, so an unknown one is a hard error."""
    urns = [await gate.urn.future() for gate in gates]
    missing = [gate.pulumi_resource_name for gate, urn in zip(gates, urns) if not urn]
    if missing:
        raise RuntimeError(f"the engine returned no URN for {', '.join(missing)}; the next wave cannot be gated on it")
    return [str(urn) for urn in urns]


def gate_waves(waves: Sequence[Sequence[Item]], build_wave: WaveBuilder, close_wave: WaveCloser) -> pulumi.Output[None]:
    """Build wave 0 first, then close wave k and build wave k+1 once the closing resource is registered; resolves
    when the last wave is built.

    Wave k's closing resource depends on every gate of wave k, and wave k+1's first steps on it alone: one edge a
    node, where an edge from each first step to each gate stored `maxParallel` URNs with every node. Both edges go
    through `DependencyResource(urn)`: the engine records the same edge as with the resource itself, but the SDK's
    cycle check (run on every edge) stops at that stand-in, which carries no dependencies of its own, instead of
    walking every earlier wave again (quadratic time, and a RecursionError past a few hundred waves). Building a
    wave only once the previous one is registered sends each RegisterResource when the SDK would have sent it anyway
    (it waits for every dependency's URN), and keeps the outputs of later waves from sitting in the SDK's wait loop,
    which hands every pending output to `asyncio.wait` on each wakeup.
    """
    if not waves:
        return pulumi.Output.from_input(None)

    async def every_wave() -> None:
        gates = build_wave(waves[0], [])
        for index, wave in enumerate(waves[1:]):
            closed = close_wave(index, [DependencyResource(urn) for urn in await registered_urns(gates)])
            gates = build_wave(wave, [DependencyResource(urn) for urn in await registered_urns([closed])])

    # Every wave from a task of its own: the SDK stores the call stack of every resource (runtime/resource.py
    # _get_stack_trace), and a task's is the event loop's few frames, where the program's module frame would add
    # its callers (the platform, the layer: about 0.5 KB a resource) and the coroutine handed to Output.from_input
    # its wrapper (output.py from_awaitable, about 95 bytes). The output awaits the task, so the program ends only
    # once the last wave is built (pulumi 3.272.0 runtime/stack.py wait_for_rpcs waits for every output), and fails
    # with it.
    return pulumi.Output.from_input(asyncio.ensure_future(every_wave()))


def default_parallel() -> int:
    """`pulumi up`'s default --parallel: 4 x the CPUs (pulumi pkg/cmd/pulumi/operations/up.go L71-88)."""
    return 4 * (os.cpu_count() or 1)


def peak_connections(nodes: tuple[NodeSpec, ...], canaries: tuple[str, ...], max_parallel: int,
                     parallel: int) -> int:
    """SSH connections a rollout holds at once: one per host step running (components/runner: its ssh ends with it), so
    at most the engine's --parallel and two per node of the widest wave. A destroy runs one step per node, at most
    --parallel at once."""
    widest = max((len(wave) for wave in plan_waves(nodes, canaries, max_parallel)), default=0)
    return min(parallel, STEPS_AT_ONCE_PER_NODE * widest)
