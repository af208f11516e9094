"""`python -m bench.real_engine --up [N ...]`: `pulumi up` of a prod-shaped stack of N nodes through the real CLI.

Per size, in a world of its own: a fresh local control plane with the N nodes registered (kwok) and the simulated
device manager (testkit/simulated_devices.py), and a fleet of N fake nodes behind a bastion, as prod reaches its nodes
(testkit/fakenode/fleet.py: sshd, ssh, the bastion and the staging are real; the installers and the NPUs answer at
once). There the program's `pulumi up --yes --skip-preview --non-interactive` of the synthetic stack runs, then the
bare program's with as many resources, both with PULUMI_SKIP_CHECKPOINTS unset (the engine's default, as up.yml
runs). Printed per size, as for the preview, and then the state each `up` left (`pulumi stack export`): its bytes,
bytes per node (the resources whose URN names the node, as tests/e2e counts them, and the whole over N, with the
node's largest kinds of resource) and the SSH connections the nodes were dialled with, in all and at most at once.
"""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from bench.real_engine import STACK, control_plane, init_stack, preview, print_row, project, provider_line
from bench.synthetic import PASSPHRASE, ROOT, synthetic_stack
from engine.cache import BIN
from engine.cluster import register_nodes
from engine.control_plane import ControlPlane
from engine.pulumi_cli import cli_env
from testkit.fakenode.bastion import Bastion
from testkit.fakenode.fleet import Fleet
from testkit.simulated_devices import DeviceAdvertiser

SIZES = (50, 200)
BASTION = "127.63.0.1"
# At the scale of hundreds of nodes, the device manager's round of reads is spaced out more than the e2e's 1 s.
ADVERTISE_EVERY_S = 2.0


def node_facts(config: dict) -> list[dict]:
    """Each stack node with its pool's chip, arch and NPU count: what a kubelet and its device manager report."""
    pools = config["ascend-npu:pools"]
    return [{"name": node["name"], **{k: pools[node["pool"]][k] for k in ("chip", "arch", "npuCount")}}
            for node in config["ascend-npu:nodes"]]


def free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def world(work: Path, config: dict, key: Path) -> Iterator[tuple[ControlPlane, Fleet, Bastion]]:
    """A control plane with the stack's nodes registered and their devices advertised, the fleet and its bastion."""
    facts = node_facts(config)
    with control_plane(work) as plane, \
            Fleet(work / "fleet", len(facts), key.with_suffix(".pub"), [n["chip"] for n in facts]) as fleet, \
            Bastion(work / "bastion", BASTION, free_port(BASTION), {}, key.with_suffix(".pub")) as bastion:
        register_nodes(plane.kube(), facts, tell=lambda line: None)
        advertiser = DeviceAdvertiser(plane.kube(), lambda: facts, config["ascend-npu:cluster"]["namespace"],
                                      interval=ADVERTISE_EVERY_S)
        advertiser.start()
        try:
            yield plane, fleet, bastion
        finally:
            advertiser.stop()


def reached_through(config: dict, plane: ControlPlane, fleet: Fleet, bastion: Bastion) -> dict:
    """The stack's config with the fleet's addresses, its one host key and port, the bastion, and this cluster."""
    for node, address in zip(config["ascend-npu:nodes"], fleet.addresses):
        node.update(address=address, hostKey=fleet.host_key)
    # sshd logs in only a user this machine has; prod's ascend-deploy is not one here.
    config["ascend-npu:ssh"] = {"user": "root", "port": fleet.port, "bastion": {
        "host": bastion.address, "port": bastion.port, "hostKey": bastion.host_key}}
    config["ascend-npu:cluster"]["kubeContext"] = plane.context
    return config


def program_up(work: Path, nodes: int, extra_env: dict[str, str]) -> dict:
    """The program's `up` at NODES in its world: the run's figures, its state's and the connections it opened."""
    stack = synthetic_stack(nodes)
    key = work / "deploy_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    with world(work, stack["config"], key) as (plane, fleet, bastion):
        config = reached_through(stack["config"], plane, fleet, bastion)
        folder, doc = project(work, "program", config, stack["encryptionsalt"])
        for name in (".venv", "components"):  # the drain and host steps run `.venv/bin/python -m components...` here
            (folder / name).symlink_to(ROOT / name)
        env = {**cli_env(work / "program-state", PASSPHRASE, plane.kubeconfig), **extra_env}
        init_stack(folder, doc, env)
        # Pulumi.prod.yaml's key is a placeholder: a key of its own, set as users set it.
        subprocess.run([str(BIN / "pulumi"), "config", "set", "--secret", "ascend-npu:sshPrivateKey", "--stack",
                        STACK], cwd=folder, env=env, input=key.read_text(), check=True, capture_output=True, text=True)
        figures = preview(folder, env, command="up")
        figures.update(opened=fleet.opened, at_once=fleet.most)
    if "error" not in figures:
        figures.update(state_figures(exported(folder, env), [n["name"] for n in config["ascend-npu:nodes"]]))
    return figures


def bare_up(work: Path, resources: int, extra_env: dict[str, str]) -> dict:
    folder, doc = project(work, "bare", {"bare:count": str(max(resources - 1, 1))})
    env = {**cli_env(work / "bare-state", PASSPHRASE), **extra_env}
    init_stack(folder, doc, env)
    figures = preview(folder, env, str(ROOT / "bench" / "bare_commands.py"), command="up")
    if "error" in figures:
        return figures
    return {**figures, "state_bytes": compact_bytes(json.loads(exported(folder, env)))}


def exported(folder: Path, env: dict) -> str:
    """The state as `pulumi stack export` prints it (indented JSON)."""
    return subprocess.run([str(BIN / "pulumi"), "stack", "export", "--stack", STACK], cwd=folder, env=env,
                          check=True, capture_output=True, text=True).stdout




def compact_bytes(state: dict) -> int:
    """The state's bytes without the export's indentation, measured as the per-node figure is (json.dumps)."""
    return len(json.dumps(state))


def state_figures(text: str, names: list[str]) -> dict:
    """The state's bytes; per node, the resources whose URN names it (their JSON), by kind of resource too."""
    per_node: dict[str, int] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    state = json.loads(text)
    for resource in state["deployment"]["resources"]:
        name = resource["urn"].rsplit("::", 1)[-1]
        for node in names:
            if f"-{node}" in resource["urn"]:
                size = len(json.dumps(resource))
                per_node[node] += size
                kinds[name.replace(node, "<node>")] += size
    largest = sorted(kinds.items(), key=lambda kind: -kind[1])[:4]
    return {"state_bytes": compact_bytes(state), "node_bytes": sum(per_node.values()) / max(len(names), 1),
            "node_kinds": {kind: size / len(names) for kind, size in largest}}


def print_state(row: dict) -> None:
    program, bare = row["program"], row["bare"]
    if "error" in program or "error" in bare:
        return
    nodes = row["nodes"]
    kinds = ", ".join(f"{kind.removeprefix('ascend-npu-')} {size / 1024:.1f}"
                      for kind, size in program["node_kinds"].items())
    whole, bare_whole = program["state_bytes"] / nodes / 1024, bare["state_bytes"] / nodes / 1024
    print(f"        after up: state (`pulumi stack export`, compact JSON) program {program['state_bytes'] / 1e6:.2f} "
          f"MB, bare {bare['state_bytes'] / 1e6:.2f} MB; per node {program['node_bytes'] / 1024:.1f} KiB in the "
          f"resources whose URN names it (largest, KiB: {kinds}), the whole state / N {whole:.1f} KiB (bare "
          f"{bare_whole:.1f}); ssh connections to the nodes: {program['opened']} in all, at most {program['at_once']} "
          "at once", flush=True)
    parts = sorted(program["cpu_parts"].items(), key=lambda part: -part[1])
    rest = program["cpu_s"] - sum(seconds for _, seconds in parts)
    print("        program CPU by part, s: " + ", ".join(f"{name} {seconds:.1f}" for name, seconds in parts) +
          f", the rest (the bastion hops, which ssh leaves to the measuring process) {rest:.1f}", flush=True)


def main_up(sizes: tuple[int, ...], keep: Path | None = None, skip_checkpoints: bool = False) -> int:
    # --skip-checkpoints: the state written once, at the end; what the program and the nodes cost without the
    # engine's checkpoint after every step (quadratic in resources). An interrupted `up` so run records nothing.
    extra_env = {"PULUMI_SKIP_CHECKPOINTS": "true"} if skip_checkpoints else {}
    checkpoints = ("PULUMI_SKIP_CHECKPOINTS=true, the state written once at the end" if skip_checkpoints else
                   "checkpoints on (PULUMI_SKIP_CHECKPOINTS unset, as up.yml runs)")
    print(f"`pulumi up --yes --skip-preview --non-interactive` through the real CLI ({BIN / 'pulumi'}); "
          f"{provider_line()}; {checkpoints}; nodes: a fleet of "
          "fake nodes behind a bastion (real sshd, ssh and staging; installers and NPUs answer at once), logged in "
          "as root (prod's ascend-deploy does not exist here); no policy pack:", flush=True)
    rows: list[dict] = []
    for nodes in sizes or SIZES:
        with contextlib.ExitStack() as scratch:
            work = keep / f"up-{nodes}" if keep else Path(scratch.enter_context(tempfile.TemporaryDirectory()))
            work.mkdir(parents=True, exist_ok=True)
            program = program_up(work, nodes, extra_env)
            bare = bare_up(work, program.get("resources", 0), extra_env)
        rows.append({"nodes": nodes, "program": program, "bare": bare})
        print_row(rows[-1], rows[-2] if len(rows) > 1 else None)
        print_state(rows[-1])
    return 0 if all("error" not in row["program"] and "error" not in row["bare"] for row in rows) else 1

