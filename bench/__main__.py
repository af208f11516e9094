"""`make bench`: planning cost against its floors, the policy pack's cost, host step runs, faults and the chart."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.chart_cost import measure_chart, print_chart_cost
from bench.connections import measure_connections, print_connections
from bench.host_faults import print_fault_table, run_scenarios
from bench.host_step_runs import measure_host_runs
from bench.planning_cost import CRASH_CHECK, figures, measure, print_table
from bench.real_engine import real_engine_tables
from bench.synthetic import write_synthetic


def main() -> None:
    start = time.perf_counter()
    print("CPU seconds of one program run under the plan's mock engine (median of `runs` fresh processes; ratios: "
          "median of the ratios\nwithin a run), synthetic prod-shaped stacks; shaped floor: the same components, "
          "parents, resource types and edges,\nwired by the same rollout code, with trivial inputs; paced floor: the "
          "shaped one at the program's collector pace,\nso what is left above it is inputs and code; bare floor: as "
          "many plain resources, no parent, no edge")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print_table(figures(work))
        nodes, max_parallel = CRASH_CHECK
        crash = measure("program", nodes, max_parallel, write_synthetic(nodes, work))
        print(f"{nodes} nodes at maxParallel {max_parallel}, one run: " +
              (f"error: {crash['error']}" if "error" in crash else
               f"{crash['resources']} resources, {crash['cpu_s']:.2f} s CPU"))
        pack = measure("policy", 1000, 8, write_synthetic(1000, work))
        connections = measure_connections(write_synthetic(1000, work))
    print("policy pack over gRPC, 1000 nodes: " + ("error: " + pack["error"] if "error" in pack else
          f"{pack['resources']} resources, {pack['analyze_ms_per_resource']:.2f} ms wall per Analyze call, "
          f"AnalyzeStack {pack['analyze_stack_s']:.2f} s, pack CPU {pack['pack_cpu_ms_per_resource']:.2f} ms per "
          f"resource (its start included), {pack['violations']} violations"))
    print_connections(connections)
    host = measure_host_runs()
    print("host steps on the fake node over SSH: " + ", ".join(f"{k} {v:.2f} s" if isinstance(v, float) else
                                                               f"{k} {v}" for k, v in host.items()))
    print_fault_table(run_scenarios())
    real_engine_tables()
    print_chart_cost(measure_chart())
    print(f"bench took {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
