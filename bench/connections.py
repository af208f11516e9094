"""SSH connections one `up` of a stack holds at once, and one `pulumi destroy` of it, counted on its resources.

Each host step is a local command whose `ssh` ends with the step (components/runner): a rollout holds one
connection per step running at that moment, at most the engine's --parallel and two per node of the widest wave
(components/host/rollout.py); a destroy runs one ssh step per node, at most --parallel at once. What
pulumi-command v1.2.1 keeps open until it exits is counted apart: a remote Command that runs a command on create
keeps its client (provider/pkg/provider/remote/commandOutputs.go L31-40), a copy its bastion client
(remote/connection.go L211-242, remote/copyController.go L169-173), and a remote Command with a `delete` its client
once that runs. These are counts over the program's resources (run under
the plan's mock engine); tests/e2e measures the sockets of a real rollout. `python -m bench.connections STACK_FILE
[no-bastion]` prints one JSON line.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from bench.synthetic import ROOT
from components.config.config_source import spec_from_values
from components.host.rollout import default_parallel, peak_connections
from components.plan.recorder import SECRET_SIG, SIG_KEY, run_program
from components.plan.stack_files import read_stack_config

COMMAND, COPY, LOCAL = "command:remote:Command", "command:remote:CopyToRemote", "command:local:Command"
NODE_STEP = "-m components.runner "


def _plain(value):
    return value.get("value") if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG else value


def held(resources: list, peak_steps: int, parallel: int, bastion: bool) -> dict:
    """What the stack's resources hold at once: in an `up`, its ssh steps (PEAK_STEPS) and what remote steps that
    dial on create and copies leave open until it ends; in a destroy of every node, its ssh delete steps (at most
    PARALLEL) and what remote deletes leave open. Through a BASTION each is also a session there."""
    left_open = sum(1 for r in resources if r.type == COPY or r.type == COMMAND and _plain(r.properties.get("create")))
    remote_deletes = sum(1 for r in resources if r.type == COMMAND and _plain(r.properties.get("delete")))
    ssh_steps = sum(1 for r in resources if r.type == LOCAL and NODE_STEP in str(r.properties.get("create")))
    ssh_deletes = sum(1 for r in resources if r.type == LOCAL and NODE_STEP in str(r.properties.get("delete")))
    nodes = sum(r.type == "ascend-npu:index:AscendHost" for r in resources)
    peak = (peak_steps if ssh_steps else 0) + left_open
    destroy = min(parallel, ssh_deletes) + remote_deletes
    # Without a bastion each connection is a TCP connection from this machine to a node; through one, a connection
    # to the bastion, an SSH session on it and a forwarded connection from it to the node.
    return {"nodes": nodes, "ssh_steps": ssh_steps, "left_open_by_up": left_open, "peak_operator_tcp": peak,
            "peak_bastion_sessions": peak if bastion else 0, "destroy_ssh_steps": ssh_deletes,
            "left_open_by_destroy": remote_deletes, "peak_destroy": destroy,
            "peak_destroy_bastion_sessions": destroy if bastion else 0}


def count(stack_file: Path, bastion: bool, parallel: int = 0) -> dict:
    """The counts for the stack in STACK_FILE, with or without its bastion, under PARALLEL (default: `pulumi up`'s
    on this machine)."""
    parallel = parallel or default_parallel()
    stack = yaml.safe_load(stack_file.read_text())
    if not bastion:
        stack["config"]["ascend-npu:ssh"].pop("bastion", None)
        stack["config"]["ascend-npu:rollout"].pop("allowReboot", None)
    scratch = stack_file.with_name(stack_file.stem + (".bastion" if bastion else ".direct") + ".yaml")
    scratch.write_text(yaml.safe_dump(stack, sort_keys=False))
    config = read_stack_config(ROOT, scratch.stem.split(".", 1)[1], scratch)
    spec = spec_from_values(config.values, config.secret_keys)
    peak = peak_connections(spec.nodes, spec.canaries, spec.rollout.max_parallel, parallel)
    resources = run_program(ROOT / "__main__.py", config.project, config.stack, config.values, config.secret_keys)
    return {**held(resources, peak, parallel, bastion), "parallel": parallel}


def measure_connections(stack_file: Path) -> list[dict]:
    """Each variant in a fresh process (one program run per process, as the planning bench does)."""
    rows = []
    for variant in ("bastion", "no-bastion"):
        out = subprocess.run([sys.executable, "-m", "bench.connections", str(stack_file), variant], cwd=ROOT,
                             capture_output=True, text=True)
        rows.append({"variant": variant, **(json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0
                                            else {"error": (out.stderr.strip().splitlines() or ["?"])[-1]})})
    return rows


def print_connections(rows: list[dict]) -> None:
    print("SSH connections at once (counted on the program's resources):")
    for row in rows:
        if "error" in row:
            print(f"  {row['variant']}: error: {row['error']}")
            continue
        print(f"  {row['nodes']} nodes, {row['variant']}, --parallel {row['parallel']}: `up` {row['ssh_steps']} ssh "
              f"steps, at most {row['peak_operator_tcp']} connections from this machine and "
              f"{row['peak_bastion_sessions']} sessions on the bastion at once, {row['left_open_by_up']} left open "
              f"until it ends; `destroy` of every node: {row['destroy_ssh_steps']} ssh steps, at most "
              f"{row['peak_destroy']} connections ({row['peak_destroy_bastion_sessions']} sessions on the bastion) "
              f"at once, {row['left_open_by_destroy']} left open")


if __name__ == "__main__":
    print(json.dumps(count(Path(sys.argv[1]), sys.argv[2] != "no-bastion")))
