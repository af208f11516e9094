"""`make bench`: plan wall time, resources per node and program cost over the SDK floor, for 10-1000 nodes."""
from __future__ import annotations

import io
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

from bench.host_faults import print_fault_table, run_scenarios
from bench.host_steps import measure_host_runs
from bench.synthetic import ROOT, write_synthetic
from components.plan.__main__ import plan, run_stack
from components.plan.recorder import run_program
from components.plan.stack_files import read_stack_config

SIZES = (10, 100, 1000)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def program_run(stack_file: Path, name: str):
    return run_stack(read_stack_config(ROOT, name, stack_file))


def floor_run(count: int):
    return run_program(ROOT / "bench" / "floor_program.py", "floor", "floor", {"floor:count": str(count)}, [])


def plan_figures(work: Path) -> list[dict]:
    rows = []
    for nodes in SIZES:
        stack_file = write_synthetic(nodes, work)
        with redirect_stdout(io.StringIO()):
            plan_seconds, code = timed(lambda: plan(f"bench-{nodes}", work / f"out-{nodes}", stack_file))
        program_seconds, resources = timed(lambda: program_run(stack_file, f"bench-{nodes}"))
        floor_seconds, _ = timed(lambda: floor_run(len(resources)))
        rows.append({"nodes": nodes, "exit": code, "resources": len(resources), "plan_s": plan_seconds,
                     "program_s": program_seconds, "floor_s": floor_seconds})
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = plan_figures(Path(tmp))
    base = rows[0]
    print("offline plan (program under mocks + policy pack), synthetic prod-shaped stacks")
    print(f"{'nodes':>6} {'exit':>4} {'resources':>9} {'res/node':>8} {'plan s':>8} {'program s':>9} "
          f"{'SDK floor s':>11} {'program/floor':>13}")
    for row in rows:
        per_node = (row["resources"] - base["resources"]) / (row["nodes"] - base["nodes"]) if row is not base else \
            float("nan")
        print(f"{row['nodes']:>6} {row['exit']:>4} {row['resources']:>9} {per_node:>8.2f} {row['plan_s']:>8.2f} "
              f"{row['program_s']:>9.3f} {row['floor_s']:>11.3f} {row['program_s'] / row['floor_s']:>13.2f}")
    print("res/node: added resources per added node (against the 10-node stack); SDK floor: the same number "
          "of bare resources registered under the same mocks")
    figures = measure_host_runs()
    print("host steps on the fake node over SSH: " + ", ".join(f"{k} {v:.2f} s" if isinstance(v, float) else
                                                               f"{k} {v}" for k, v in figures.items()))
    print_fault_table(run_scenarios())


if __name__ == "__main__":
    main()
