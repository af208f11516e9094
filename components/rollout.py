"""Rollout order: canaries first, then waves of at most `maxParallel` nodes."""
from __future__ import annotations

from itertools import groupby

from components.spec.hosts import NodeSpec


def _chunks(nodes: list[NodeSpec], size: int) -> list[tuple[NodeSpec, ...]]:
    return [tuple(nodes[i:i + size]) for i in range(0, len(nodes), size)]


def plan_waves(nodes: tuple[NodeSpec, ...], canaries: tuple[str, ...], max_parallel: int) -> list[tuple[NodeSpec, ...]]:
    """Waves in order: the canaries, then nodes by their `wave` number, then the rest in config order.

    Every wave holds at most `max_parallel` nodes; a group larger than that is split in config order.
    """
    canary_nodes = [n for n in nodes if n.name in canaries]
    others = [n for n in nodes if n.name not in canaries]
    numbered = sorted((n for n in others if n.wave is not None), key=lambda n: n.wave)
    unnumbered = [n for n in others if n.wave is None]
    waves = _chunks(canary_nodes, max_parallel)
    for _, group in groupby(numbered, key=lambda n: n.wave):
        waves += _chunks(list(group), max_parallel)
    waves += _chunks(unnumbered, max_parallel)
    return waves
