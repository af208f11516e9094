"""One measurement in a fresh process: `python -m bench.measure <kind> <nodes> <maxParallel> <stack file>`.

Prints one JSON line: resources registered, CPU seconds of the run (every thread of this process, the
mock engine's included) and wall seconds. Kinds: `program` (the real program), `shaped` (the shaped floor),
`paced` (the shaped floor at the program's collector pace), `bare` (the bare floor), `policy` (the program,
then the policy pack over gRPC).
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from components.plan.recorder import run_program
from components.plan.stack_files import StackConfig, read_stack_config

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _timed(run) -> tuple[object, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = run()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def program_config(max_parallel: int, stack_file: Path) -> tuple[StackConfig, dict[str, str]]:
    """The stack's config as the CLI hands it over (read before timing: the CLI parses the stack file)."""
    config = read_stack_config(ROOT, stack_file.stem.split(".", 1)[1], stack_file)
    rollout = {**json.loads(config.values["ascend-npu:rollout"]), "maxParallel": max_parallel}
    return config, {**config.values, "ascend-npu:rollout": json.dumps(rollout)}


def program(config: StackConfig, values: dict[str, str]) -> list:
    return run_program(ROOT / "__main__.py", config.project, config.stack, values, config.secret_keys)


def shaped(nodes: int, max_parallel: int, cluster_objects: int) -> list:
    return run_program(BENCH / "shaped_program.py", "shaped", "shaped",
                       {"shaped:nodes": str(nodes), "shaped:maxParallel": str(max_parallel),
                        "shaped:clusterObjects": str(cluster_objects)}, [])


def paced(nodes: int, max_parallel: int, cluster_objects: int) -> list:
    """The shaped floor with the collector paced as the program paces it: what is left is inputs and code."""
    import gc

    from components.platform import COLLECTOR_PACE
    gc.set_threshold(*COLLECTOR_PACE)
    return shaped(nodes, max_parallel, cluster_objects)


def bare(count: int) -> list:
    return run_program(BENCH / "floor_program.py", "floor", "floor", {"floor:count": str(count)}, [])


def policy(nodes: int, max_parallel: int, stack_file: Path) -> dict:
    """The pack's cost over gRPC: wall per Analyze call, the AnalyzeStack call, the pack process's CPU."""
    from components.plan.analyzer import PolicyPackProcess
    resources = program(*program_config(max_parallel, stack_file))
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    children = os.times()
    with PolicyPackProcess(ROOT / "policies") as pack:
        pack.configure({})
        start = time.perf_counter()
        violations = sum(len(pack.analyze(r, providers)) for r in resources)
        analyze_s = time.perf_counter() - start
        start = time.perf_counter()
        violations += len(pack.analyze_stack(resources, providers))
        stack_s = time.perf_counter() - start
    after = os.times()  # the pack has exited: its CPU (start included) is in the children's times
    pack_cpu = after.children_user + after.children_system - children.children_user - children.children_system
    return {"resources": len(resources), "violations": violations, "analyze_stack_s": stack_s,
            "analyze_ms_per_resource": 1000 * analyze_s / len(resources),
            "pack_cpu_ms_per_resource": 1000 * pack_cpu / len(resources)}


def main(argv: list[str]) -> None:
    kind, nodes, max_parallel, extra = argv[0], int(argv[1]), int(argv[2]), argv[3]
    if kind == "policy":
        print(json.dumps(policy(nodes, max_parallel, Path(extra))))
        return
    config = program_config(max_parallel, Path(extra)) if kind == "program" else None
    run = {"program": lambda: program(*config),
           "shaped": lambda: shaped(nodes, max_parallel, int(extra)),
           "paced": lambda: paced(nodes, max_parallel, int(extra)),
           "bare": lambda: bare(int(extra))}[kind]
    try:
        resources, cpu, wall = _timed(run)
    except RecursionError as exc:
        print(json.dumps({"error": f"RecursionError: {exc}"}))
        return
    print(json.dumps({"resources": len(resources), "cpu_s": cpu, "wall_s": wall}))


if __name__ == "__main__":
    main(sys.argv[1:])
