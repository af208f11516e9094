"""SSH connections held open during one `up` by pulumi-command v1.2.1, counted on the program's own resources.

v1.2.1 never closes the client of a remote Command (provider/pkg/provider/remote/commandOutputs.go L31-40), a
CopyToRemote closes its target client only (remote/copyController.go L169-173), and the bastion (proxy) client of
any step is never closed (remote/connection.go L211-242): all stay open until the plugin exits, when `up` ends. So
what a stack holds at its peak is a count over its remote resources, whatever the waves: the figures below are that
count on the program's resources (run under the plan's mock engine), not a measurement of sockets.
`python -m bench.connections STACK_FILE [no-bastion]` prints one JSON line.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from bench.synthetic import ROOT
from components.plan.recorder import SECRET_SIG, SIG_KEY, run_program
from components.plan.stack_files import read_stack_config

COMMAND, COPY = "command:remote:Command", "command:remote:CopyToRemote"


def _plain(value):
    return value.get("value") if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG else value


def held(resources: list) -> dict:
    """The connections v1.2.1 keeps open once every remote step of the stack has run."""
    commands = copies = proxied = 0
    for resource in resources:
        if resource.type not in (COMMAND, COPY):
            continue
        commands += resource.type == COMMAND
        copies += resource.type == COPY
        proxied += bool((_plain(resource.properties.get("connection")) or {}).get("proxy"))
    nodes = sum(r.type == "ascend-npu:index:AscendHost" for r in resources)
    through_bastion = proxied > 0
    return {"nodes": nodes, "remote_commands": commands, "copies": copies,
            # Without a bastion each open client is a TCP connection from this machine to a node; through one,
            # each step's proxy client is a connection to the bastion and each open target client a channel in it.
            "operator_tcp": proxied if through_bastion else commands,
            "bastion_sessions": proxied, "bastion_to_nodes": commands if through_bastion else 0,
            "per_node_sessions": commands // max(nodes, 1)}


def count(stack_file: Path, bastion: bool) -> dict:
    """The counts for the stack in STACK_FILE, with or without its bastion."""
    stack = yaml.safe_load(stack_file.read_text())
    if not bastion:
        stack["config"]["ascend-npu:ssh"].pop("bastion", None)
        stack["config"]["ascend-npu:rollout"].pop("allowReboot", None)
    scratch = stack_file.with_name(stack_file.stem + (".bastion" if bastion else ".direct") + ".yaml")
    scratch.write_text(yaml.safe_dump(stack, sort_keys=False))
    config = read_stack_config(ROOT, scratch.stem.split(".", 1)[1], scratch)
    return held(run_program(ROOT / "__main__.py", config.project, config.stack, config.values, config.secret_keys))


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
    print("SSH connections pulumi-command v1.2.1 holds open until `up` ends (counted on the program's resources):")
    for row in rows:
        if "error" in row:
            print(f"  {row['variant']}: error: {row['error']}")
            continue
        print(f"  {row['nodes']} nodes, {row['variant']}: {row['remote_commands']} remote commands and "
              f"{row['copies']} copies; this machine {row['operator_tcp']} TCP connections, the bastion "
              f"{row['bastion_sessions']} SSH sessions and {row['bastion_to_nodes']} forwarded connections, "
              f"each node {row['per_node_sessions']} SSH sessions")


if __name__ == "__main__":
    print(json.dumps(count(Path(sys.argv[1]), sys.argv[2] != "no-bastion")))
