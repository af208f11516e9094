"""`python -m bench.real_engine [N ...]`: `pulumi preview` of a prod-shaped stack of N nodes through the real CLI.

Each size runs twice under the same CLI, providers, program host and virtualenv, against one local control plane
(engine/control_plane.py): the program on a synthetic prod-shaped stack (bench/synthetic.py), then a bare program
that registers as many local commands, no parent, no edge (bench/bare_commands.py). Printed per run: resources,
wall and CPU seconds (every process the run started: the CLI, its plugins, the program host, the commands they ran,
all waited for), the largest process's peak memory; per size the ratio of the two, and between sizes the growth
exponent log(t2/t1)/log(n2/n1). The program is served over `--client` by engine/program_host.py, not by the Python
language host (not built here). `--up [N ...]` runs `pulumi up` instead, each size against a fleet of fake nodes
(bench/real_engine_up.py).
"""
from __future__ import annotations

import contextlib
import json
import math
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

from bench.process_tree import reap_orphans, run_reaped
from bench.synthetic import PASSPHRASE, ROOT, synthetic_stack
from engine.cache import BIN
from engine.cluster import kwok_stages_dir, prepare
from engine.command_provider import chosen
from engine.control_plane import ControlPlane
from engine.pulumi_cli import ProgramHost, cli_env

SIZES = (50, 200, 500, 1000)
STACK = "bench"
# What each command prints of the resources it created; `up` runs as up.yml runs it, without a preview.
COUNTED = {"preview": re.compile(r"\+ (\d+) to create"), "up": re.compile(r"\+ (\d+) created")}
UP_FLAGS = {"up": ("--yes", "--skip-preview")}


def children_cpu() -> tuple[float, int]:
    """CPU seconds and the largest peak RSS (KiB) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def project(work: Path, name: str, config: dict, salt: str = "") -> tuple[Path, dict]:
    """A project folder (this project's, or with SALT none, the bare program's) and its stack file's content."""
    folder = work / name
    folder.mkdir()
    if salt:
        shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    else:
        (folder / "Pulumi.yaml").write_text("name: bare\nruntime: python\n")
    (work / f"{name}-state").mkdir()
    return folder, {"config": config, **({"encryptionsalt": salt} if salt else {})}


def init_stack(folder: Path, stack: dict, env: dict) -> None:
    """The stack in FOLDER's own backend, its file then replaced by STACK (the synthetic salt and secrets)."""
    subprocess.run([str(BIN / "pulumi"), "stack", "init", STACK, "--non-interactive"], cwd=folder, env=env,
                   check=True, capture_output=True)
    (folder / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump(stack, sort_keys=False))


def program_stack(work: Path, nodes: int, plane: ControlPlane, extra_env: dict[str, str]) -> tuple[Path, dict]:
    """The prod-shaped stack of NODES nodes on PLANE, initialised; its folder and the CLI's environment."""
    stack = synthetic_stack(nodes)
    stack["config"]["ascend-npu:cluster"]["kubeContext"] = plane.context
    folder, doc = project(work, f"program-{nodes}", stack["config"], stack["encryptionsalt"])
    env = {**cli_env(work / f"program-{nodes}-state", PASSPHRASE, plane.kubeconfig), **extra_env}
    init_stack(folder, doc, env)
    return folder, env


@contextlib.contextmanager
def control_plane(work: Path) -> Iterator[ControlPlane]:
    """A local cluster for the run, stopped whatever happens."""
    plane = ControlPlane(work / "cluster", tied=True)
    plane.start(kwok_stages_dir())
    try:
        prepare(plane.kube())
        yield plane
    finally:
        plane.stop()


def preview(folder: Path, env: dict, program: str = "", command: str = "preview") -> dict:
    """One `pulumi preview` (or COMMAND: `up`) of the stack in FOLDER, in a process of its own so that its figures
    are its alone."""
    env = {**env, **({"ASCEND_NPU_PROGRAM": program} if program else {})}
    done = subprocess.run([sys.executable, "-m", "bench.real_engine", "--one", str(folder), json.dumps(env), command],
                          cwd=ROOT, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if done.returncode == 0 and lines else {"error": done.stderr.strip()[-300:]}


def one(folder: Path, env: dict, extra: tuple[str, ...] = (), command: str = "preview") -> dict:
    """`--one FOLDER ENV [COMMAND]`: the preview (or `up`) itself, with the CPU and peak memory of every process it
    started."""
    words = [str(BIN / "pulumi"), command, "--stack", STACK, "--non-interactive", *UP_FLAGS.get(command, ())]
    cpu0, _ = children_cpu()
    start = time.monotonic()
    with ProgramHost(cwd=folder, env=env) as host:
        code, out, split = run_reaped([*words, "--client", host.address, *extra], folder, env, host.pid)
    wall = time.monotonic() - start
    reap_orphans()
    (folder / f"pulumi-{command}.log").write_text(out)
    cpu1, peak = children_cpu()
    if code != 0:
        return {"error": " | ".join(out.strip().splitlines()[-12:]) if out.strip() else f"exit {code}"}
    found = COUNTED[command].search(out)
    return {"resources": int(found.group(1)) if found else 0, "wall_s": wall, "cpu_s": cpu1 - cpu0,
            "peak_mib": peak / 1024, "cpu_parts": split}


def measure(sizes: tuple[int, ...], work: Path, extra_env: dict[str, str]) -> list[dict]:
    rows: list[dict] = []
    with control_plane(work) as plane:
        for nodes in sizes:
            program = preview(*program_stack(work, nodes, plane, extra_env))
            count = program.get("resources", 0)
            # As many resources as the program's, its stack resource included.
            folder, doc = project(work, f"bare-{nodes}", {"bare:count": str(max(count - 1, 1))})
            env = {**cli_env(work / f"bare-{nodes}-state", PASSPHRASE, plane.kubeconfig), **extra_env}
            init_stack(folder, doc, env)
            bare = preview(folder, env, str(ROOT / "bench" / "bare_commands.py"))
            rows.append({"nodes": nodes, "program": program, "bare": bare})
            print_row(rows[-1], rows[-2] if len(rows) > 1 else None)
    return rows


def profile(nodes: int, work: Path, top: int = 20) -> None:
    """`--profile N`: the program's preview at N nodes with the CLI's own profiles (`--profiling`, Go pprof) and the
    program host's (cProfile); the top entries of each."""
    with control_plane(work) as plane:
        folder, env = program_stack(work, nodes, plane, {})
        figures = one(folder, {**env, "ASCEND_NPU_PROFILE": str(work / "program.prof")},
                      ("--profiling", str(work / "cli")))
    print(f"{nodes} nodes: {json.dumps(figures)}")
    print(f"\nthe program host's thread (cProfile), top {top} by own time:")
    pstats.Stats(str(work / "program.prof")).sort_stats("tottime").print_stats(top)
    cpu = next(work.glob("cli.*.cpu"))
    print(f"the CLI and engine (pprof {cpu.name}), top {top}:")
    go = shutil.which("go") or "/usr/local/go/bin/go"
    subprocess.run([go, "tool", "pprof", "-top", f"-nodecount={top}", str(BIN / "pulumi"), str(cpu)])


def exponent(a: dict, b: dict, side: str) -> str:
    try:
        return f"{math.log(b[side]['wall_s'] / a[side]['wall_s']) / math.log(b['nodes'] / a['nodes']):.2f}"
    except (KeyError, ValueError, ZeroDivisionError):
        return "-"


def print_row(row: dict, before: dict | None) -> None:
    program, bare = row["program"], row["bare"]
    if "error" in program or "error" in bare:
        print(f"  {row['nodes']} nodes: error: {program.get('error') or bare.get('error')}", flush=True)
        return
    growth = f", growth from {before['nodes']}: program {exponent(before, row, 'program')}, bare " \
             f"{exponent(before, row, 'bare')}" if before else ""
    print(f"  {row['nodes']:>5} nodes, {program['resources']:>6} resources: program {program['wall_s']:7.1f} s wall "
          f"{program['cpu_s']:7.1f} s CPU {program['peak_mib']:6.0f} MiB; bare {bare['wall_s']:7.1f} s wall "
          f"{bare['cpu_s']:7.1f} s CPU {bare['peak_mib']:6.0f} MiB; ratio {program['wall_s'] / bare['wall_s']:.2f}"
          f"{growth}", flush=True)


def provider_line() -> str:
    """Which command provider binary the runs measure, and how the program is served."""
    provider = chosen()
    kind = "the stand-in" if provider.is_standin else "from ASCEND_NPU_COMMAND_PROVIDER"
    return (f"command provider ({kind}) {provider.binary} sha256 {provider.sha256[:16]}; program served over "
            "--client (engine/program_host.py)")


def real_engine_tables() -> None:
    """`make bench`'s part: every size with PULUMI_SKIP_CHECKPOINTS=true (as the pull-request check previews), and
    the two smallest without it (the engine's default, quadratic in resources); then `up` at those two sizes, and
    at every size with the skip (what the program and the nodes cost beside the engine's checkpoints)."""
    main([str(n) for n in SIZES] + ["--skip-checkpoints"])
    main([str(n) for n in SIZES[:2]])
    main(["--up", *(str(n) for n in SIZES[:2])])
    main(["--up", *(str(n) for n in SIZES), "--skip-checkpoints"])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(one(Path(argv[1]), json.loads(argv[2]), command=argv[3] if len(argv) > 3 else "preview")))
        return 0
    if argv[:1] == ["--up"]:
        # --up [N ...] [--keep DIR] [--skip-checkpoints]: DIR keeps each run's folders and logs
        from bench.real_engine_up import main_up
        keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
        return main_up(tuple(int(a) for a in argv[1:] if a.isdigit()), keep, "--skip-checkpoints" in argv)
    if argv[:1] == ["--profile"]:  # --profile N [FOLDER]: FOLDER keeps the profiles
        if len(argv) > 2:
            Path(argv[2]).mkdir(parents=True, exist_ok=True)
            profile(int(argv[1]), Path(argv[2]))
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            profile(int(argv[1]), Path(tmp))
        return 0
    # --skip-checkpoints: the engine saves the state once at the end instead of after every step (pulumi
    # sdk/go/common/env/env.go SkipCheckpoints; pkg/backend/snapshot.go unsafeServiceLoop).
    extra_env = {"PULUMI_SKIP_CHECKPOINTS": "true"} if "--skip-checkpoints" in argv else {}
    sizes = tuple(int(a) for a in argv if a.isdigit()) or SIZES
    print(f"`pulumi preview` through the real CLI ({BIN / 'pulumi'}); {provider_line()}"
          f"{'; PULUMI_SKIP_CHECKPOINTS=true' if extra_env else ''}:", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        measure(sizes, Path(tmp), extra_env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
