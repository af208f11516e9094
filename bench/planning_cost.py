"""Planning cost: program CPU against two floors, each run in its own fresh process, for 10 to 1000 nodes."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from bench.synthetic import ROOT, write_synthetic

SIZES = (10, 100, 300, 1000)
MAX_PARALLEL = (1, 8, 64)
# Runs per figure (the median is shown): three each, about 20 minutes on 2 shared cores, most of it at 1000 nodes.
REPEATS = {10: 3, 100: 3, 300: 3, 1000: 3}
CRASH_CHECK = (2000, 1)  # one run of the program: nodes, maxParallel
# Resources per node of the synthetic (mirror) stacks: component, scripts copy, drain, install, verify, on-destroy,
# uncordon, label patch.
PER_NODE = 8
FIXED = 4  # stack, platform, provider, cluster component (the shaped floor adds the rest as cluster objects)


def measure(kind: str, nodes: int, max_parallel: int, extra) -> dict:
    """One run in a fresh Python process, so no figure pays for the objects an earlier run left behind."""
    out = subprocess.run([sys.executable, "-m", "bench.measure", kind, str(nodes), str(max_parallel), str(extra)],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit " + str(out.returncode)])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(runs: list[dict]) -> dict:
    cpu = [r["cpu_s"] for r in runs]
    return {"resources": runs[0]["resources"], "cpu_s": statistics.median(cpu), "spread": (min(cpu), max(cpu))}


def size_figures(nodes: int, stack_file: Path) -> list[dict]:
    """Each repeat runs the bare floor, then per maxParallel the program and its shaped floor, back to back:
    the ratios are taken within a repeat, so a change in the machine's load between repeats cancels out."""
    runs: dict[int, list[dict]] = {mp: [] for mp in MAX_PARALLEL}
    for _ in range(REPEATS[nodes]):
        bare = None
        for max_parallel in MAX_PARALLEL:
            program = measure("program", nodes, max_parallel, stack_file)
            if "error" in program:
                return [{"nodes": nodes, "mp": max_parallel, "error": program["error"]}]
            count = program["resources"]
            shaped = measure("shaped", nodes, max_parallel, count - FIXED - PER_NODE * nodes)
            paced = measure("paced", nodes, max_parallel, count - FIXED - PER_NODE * nodes)
            if shaped.get("resources") != count:
                raise SystemExit(f"the shaped floor registered {shaped.get('resources')} resources, the program "
                                 f"{count}: {shaped.get('error', 'its shape no longer matches the program')}")
            bare = bare or measure("bare", nodes, max_parallel, count - 1)  # independent of maxParallel
            runs[max_parallel].append({"program": program, "shaped": shaped, "paced": paced, "bare": bare})
    return [{"nodes": nodes, "mp": mp, "repeats": len(rs),
             **{kind: summary([r[kind] for r in rs]) for kind in ("program", "shaped", "paced", "bare")},
             "to_shaped": statistics.median(r["program"]["cpu_s"] / r["shaped"]["cpu_s"] for r in rs),
             "to_paced": statistics.median(r["program"]["cpu_s"] / r["paced"]["cpu_s"] for r in rs),
             "to_bare": statistics.median(r["program"]["cpu_s"] / r["bare"]["cpu_s"] for r in rs)}
            for mp, rs in runs.items()]


def figures(work: Path) -> list[dict]:
    return [row for nodes in SIZES for row in size_figures(nodes, write_synthetic(nodes, work))]


def print_table(rows: list[dict]) -> None:
    base = {r["mp"]: r["program"]["resources"] for r in rows if r["nodes"] == SIZES[0] and "program" in r}
    print(f"{'nodes':>5} {'maxPar':>6} {'runs':>4} {'resources':>9} {'res/node':>8} {'program s':>9} "
          f"{'shaped s':>8} {'paced s':>7} {'bare s':>7} {'÷shaped':>7} {'÷paced':>6} {'÷bare':>6}  program min-max")
    for row in rows:
        if "error" in row:
            print(f"{row['nodes']:>5} {row['mp']:>6}  error: {row['error']}")
            continue
        program, shaped, paced, bare = row["program"], row["shaped"], row["paced"], row["bare"]
        per_node = ((program["resources"] - base[row["mp"]]) / (row["nodes"] - SIZES[0])
                    if row["nodes"] != SIZES[0] else float("nan"))
        low, high = program["spread"]
        print(f"{row['nodes']:>5} {row['mp']:>6} {row['repeats']:>4} {program['resources']:>9} {per_node:>8.2f} "
              f"{program['cpu_s']:>9.2f} {shaped['cpu_s']:>8.2f} {paced['cpu_s']:>7.2f} {bare['cpu_s']:>7.2f} "
              f"{row['to_shaped']:>7.2f} {row['to_paced']:>6.2f} {row['to_bare']:>6.2f}  "
              f"{low:.2f}-{high:.2f}")
