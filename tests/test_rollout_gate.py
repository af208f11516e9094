"""The wave gate on the SDK it relies on: exact edges, no recursion limit, a cycle check that stays linear."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pulumi
import pytest
from pulumi.runtime import resource_cycle_breaker

from components.host.rollout import registered_urns
from components.plan.recorder import run_program

PROGRAM = Path(__file__).with_name("rollout_program.py")


def record(waves: int, per_wave: int) -> dict[str, set[str]]:
    """name -> the names it depends on, for a trivial program gated in `waves` waves of `per_wave` nodes."""
    recorded = run_program(PROGRAM, "rollout", "test", {"rollout-test:waves": str(waves),
                                                       "rollout-test:perWave": str(per_wave)}, [])
    names = {r.urn: r.name for r in recorded}
    return {r.name: {names[d] for d in r.dependencies} for r in recorded if r.type.startswith("test:index:")}


def test_each_first_step_waits_for_the_previous_wave_closed_on_every_verify_of_it():
    deps = record(waves=4, per_wave=3)
    for w in range(4):
        for i in range(3):
            assert deps[f"w{w:04d}-n{i}-verify"] == {f"w{w:04d}-n{i}-first"}
            assert deps[f"w{w:04d}-n{i}-first"] == ({f"w{w - 1:04d}"} if w else set())
    # The last wave closes nothing: no resource waits for it.
    assert {name for name in deps if "-" not in name} == {"w0000", "w0001", "w0002"}
    for w in range(3):
        assert deps[f"w{w:04d}"] == {f"w{w:04d}-n{j}-verify" for j in range(3)}


def test_the_edges_stored_grow_with_the_nodes_not_with_the_wave_width():
    # One edge a node into the next wave, whatever maxParallel is: the width once, at the closing resource.
    deps = record(waves=3, per_wave=40)
    firsts = [d for name, d in deps.items() if name.endswith("-first")]
    assert max(len(d) for d in firsts) == 1
    assert sum(len(d) for d in deps.values()) == 3 * 40 * 2 - 40 + 2 * 40


def test_a_thousand_waves_of_one_node_plan_without_a_recursion_error():
    # Gated on the verify resources themselves, the SDK's cycle check recursed two generator levels per
    # wave and hit Python's recursion limit at about 480 waves.
    deps = record(waves=1000, per_wave=1)
    assert deps["w0999-n0-first"] == {"w0998"} and deps["w0998"] == {"w0998-n0-verify"} and len(deps) == 2999


def test_the_sdk_cycle_check_visits_a_bounded_number_of_resources_per_edge(monkeypatch):
    # Pins the SDK behaviour the gate relies on for linear cost: the cycle check run on every dependency
    # edge (pulumi/runtime/resource_cycle_breaker.py) walks what is recorded behind the target, and a
    # DependencyResource records nothing, so the walk stops at it. Should a release walk differently
    # (or rename this function), this fails loudly: re-measure `make bench` and revisit components/host/rollout.py.
    visits = 0
    walk = resource_cycle_breaker._with_transitive_deps

    def counted(resource, visited):
        nonlocal visits
        visits += 1
        yield from walk(resource, visited)

    monkeypatch.setattr(resource_cycle_breaker, "_with_transitive_deps", counted)
    waves, per_wave = 200, 2
    deps = record(waves, per_wave)
    edges = sum(len(d) for d in deps.values())
    # Each edge's walk: the target, and for verify -> first the first step's own stand-ins (per_wave of them).
    assert visits <= edges * (per_wave + 2), (visits, edges)


def test_a_gate_without_a_urn_stops_the_rollout_with_its_name():
    async def unknown_urn():
        gate = SimpleNamespace(urn=pulumi.Output.from_input(None), pulumi_resource_name="node-a-verify")
        await registered_urns([gate])

    with pytest.raises(RuntimeError, match="no URN for node-a-verify"):
        asyncio.run(unknown_urn())
