"""`make bench`: program CPU against two floors, each run in its own fresh process, for 10 to 1000 nodes."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.host_steps import measure_host_runs
from bench.synthetic import ROOT, write_synthetic

SIZES = (10, 100, 300, 1000)
MAX_PARALLEL = (1, 8, 64)
# Runs per figure (the median is shown): fewer for 1000 nodes, to keep the whole bench near 15 minutes on 2 cores.
REPEATS = {10: 5, 100: 5, 300: 3, 1000: 3}
CRASH_CHECK = (2000, 1)  # one run of the program: nodes, maxParallel
PER_NODE = 4  # resources per node of the synthetic (mirror) stacks: component, install, verify, label patch
FIXED = 4  # stack, platform, provider, cluster component (the shaped floor adds the rest as cluster objects)


def measure(kind: str, nodes: int, max_parallel: int, extra) -> dict:
    """One run in a fresh Python process, so no figure pays for the objects an earlier run left behind."""
    out = subprocess.run([sys.executable, "-m", "bench.measure", kind, str(nodes), str(max_parallel), str(extra)],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit " + str(out.returncode)])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(kind: str, nodes: int, max_parallel: int, extra, repeats: int) -> dict:
    runs = [measure(kind, nodes, max_parallel, extra) for _ in range(repeats)]
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    return {"resources": runs[0]["resources"], "cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "spread": (min(r["cpu_s"] for r in runs), max(r["cpu_s"] for r in runs))}


def figures(work: Path) -> list[dict]:
    rows, bare_by_size = [], {}
    for nodes in SIZES:
        stack_file = write_synthetic(nodes, work)
        for max_parallel in MAX_PARALLEL:
            repeats = REPEATS[nodes]
            program = median_of("program", nodes, max_parallel, stack_file, repeats)
            if "error" in program:
                rows.append({"nodes": nodes, "mp": max_parallel, "error": program["error"]})
                continue
            count = program["resources"]
            shaped = median_of("shaped", nodes, max_parallel, count - FIXED - PER_NODE * nodes, repeats)
            if shaped.get("resources") != count:
                raise SystemExit(f"the shaped floor registered {shaped.get('resources')} resources, the program {count}: "
                                 f"{shaped.get('error', 'its shape no longer matches the program')}")
            if nodes not in bare_by_size:  # the bare floor does not depend on maxParallel
                bare_by_size[nodes] = median_of("bare", nodes, max_parallel, count - 1, repeats)
            rows.append({"nodes": nodes, "mp": max_parallel, "repeats": repeats, "program": program,
                         "shaped": shaped, "bare": bare_by_size[nodes]})
    return rows


def print_table(rows: list[dict]) -> None:
    base = {r["mp"]: r["program"]["resources"] for r in rows if r["nodes"] == SIZES[0] and "program" in r}
    print(f"{'nodes':>5} {'maxPar':>6} {'runs':>4} {'resources':>9} {'res/node':>8} {'program s':>9} "
          f"{'shaped s':>8} {'bare s':>7} {'÷shaped':>7} {'÷bare':>6}  program min-max")
    for row in rows:
        if "error" in row:
            print(f"{row['nodes']:>5} {row['mp']:>6}  error: {row['error']}")
            continue
        program, shaped, bare = row["program"], row["shaped"], row["bare"]
        per_node = ((program["resources"] - base[row["mp"]]) / (row["nodes"] - SIZES[0])
                    if row["nodes"] != SIZES[0] else float("nan"))
        low, high = program["spread"]
        print(f"{row['nodes']:>5} {row['mp']:>6} {row['repeats']:>4} {program['resources']:>9} {per_node:>8.2f} "
              f"{program['cpu_s']:>9.2f} {shaped['cpu_s']:>8.2f} {bare['cpu_s']:>7.2f} "
              f"{program['cpu_s'] / shaped['cpu_s']:>7.2f} {program['cpu_s'] / bare['cpu_s']:>6.2f}  "
              f"{low:.2f}-{high:.2f}")


def main() -> None:
    start = time.perf_counter()
    print("program CPU seconds (median of `runs` fresh processes) under the plan's mock engine, synthetic prod-shaped "
          "stacks;\nshaped floor: the same components, parents, resource types and edges, wired by the same rollout "
          "code, with trivial inputs;\nbare floor: as many plain resources, no parent, no edge")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print_table(figures(work))
        nodes, max_parallel = CRASH_CHECK
        crash = measure("program", nodes, max_parallel, write_synthetic(nodes, work))
        print(f"{nodes} nodes at maxParallel {max_parallel}, one run: " +
              (f"error: {crash['error']}" if "error" in crash else
               f"{crash['resources']} resources, {crash['cpu_s']:.2f} s CPU"))
        pack = measure("policy", 1000, 8, write_synthetic(1000, work))
    print("policy pack over gRPC, 1000 nodes: " + ("error: " + pack["error"] if "error" in pack else
          f"{pack['resources']} resources, {pack['analyze_ms_per_resource']:.2f} ms wall per Analyze call, "
          f"AnalyzeStack {pack['analyze_stack_s']:.2f} s, pack CPU {pack['pack_cpu_ms_per_resource']:.2f} ms per "
          f"resource (its start included), {pack['violations']} violations"))
    host = measure_host_runs()
    print("host steps on the fake node over SSH: " + ", ".join(f"{k} {v:.2f} s" if isinstance(v, float) else
                                                               f"{k} {v}" for k, v in host.items()))
    print(f"bench took {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
