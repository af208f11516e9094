"""Faults injected into a fake node over SSH (testkit/fault_scenarios.py, guard_scenarios.py): how many held and
the bytes of user engine config lost, with the line the node printed about each."""
from __future__ import annotations

import tempfile
from pathlib import Path

from testkit import fault_scenarios, guard_scenarios
from testkit.fakenode.node import FakeNode, missing_requirements
from testkit.fakenode.packages import build_packages

SCENARIOS = fault_scenarios.SCENARIOS + guard_scenarios.SCENARIOS


def run_scenarios() -> list[dict] | str:
    """One row per scenario (name, fault, held, bytes lost, message); the reason when no fake node can run."""
    reason = missing_requirements()
    if reason:
        return reason
    rows = []
    with tempfile.TemporaryDirectory(prefix="ascend-npu-faults-") as tmp:
        packages = build_packages(Path(tmp) / "packages")
        for i, scenario in enumerate(SCENARIOS):
            with FakeNode(Path(tmp) / f"node-{i}", packages) as node:
                try:
                    outcome = scenario(node)
                    held, lost, message = outcome.bytes_lost == 0, outcome.bytes_lost, outcome.message
                except AssertionError as failure:
                    held, lost, message = False, None, str(failure).splitlines()[0]
            rows.append({"scenario": scenario.__name__, "fault": scenario.__doc__.splitlines()[0], "held": held,
                         "bytes_lost": lost, "message": message})
    return rows


def print_fault_table(rows: list[dict] | str) -> None:
    if isinstance(rows, str):
        print(f"host faults: skipped ({rows})")
        return
    held = sum(row["held"] for row in rows)
    lost = sum(row["bytes_lost"] or 0 for row in rows)
    print(f"host faults on the fake node over SSH: {held}/{len(rows)} scenarios held, {lost} bytes of user "
          "engine config lost")
    for row in rows:
        lost = "?" if row["bytes_lost"] is None else row["bytes_lost"]
        print(f"  {'held' if row['held'] else 'FAILED':>6}  lost {lost:>3} B  {row['scenario']}: {row['message']}")
