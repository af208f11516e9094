"""The end-to-end world: fake Ascend nodes behind real sshd, the local control plane, a stack the real CLI drives.

Simulated: the NPUs and the installers on each node (testkit's fake node), and the kubelets (kwok).
Everything else is real: the Pulumi CLI and engine, the kubernetes provider, etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, OpenSSH.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from components.kubeapi.client import Api
from engine.cache import BIN, REPO
from engine.control_plane import ControlPlane
from engine.pulumi_cli import ProgramHost, cli_env
from testkit.fakenode import ascend_files
from testkit.fakenode.bastion import Bastion
from testkit.fakenode.node import FakeNode
from testkit.fakenode.packages import OLD, PackageSet, in_release_set
from testkit.fakenode.sandbox import LOGS
from tests.e2e import npu_workload as work

STACK = "e2e"
# Where day 2 moves the second node (a re-addressed server).
MOVED_ADDRESS = "127.0.0.6"
# The jump host's address; the nodes' names under BEHIND resolve on it alone.
BASTION_ADDRESS, BEHIND = "127.0.0.9", "nodes.test"
# The second node is an Atlas 300I Duo inference server (four cards of two 310P3 chips); the others are 910B.
CHIPS = {"e2e-npu-02": "310P"}
PASSPHRASE = "e2e-passphrase-not-a-secret"
NAMESPACE = "ascend-system"


@dataclass
class Run:
    """One `pulumi` command: its words, exit code, output, and how long it took."""

    args: list[str]
    code: int
    out: str
    seconds: float

    def json(self) -> dict:
        return json.loads(self.out[self.out.index("{"):])


@dataclass
class World:
    """Everything one end-to-end run shares; see the module docstring for what is simulated."""

    root: Path
    packages: PackageSet
    plane: ControlPlane
    nodes: dict[str, FakeNode]
    port: int
    runs: list[Run] = field(default_factory=list)
    advertiser: Optional[object] = None  # the simulated device manager (testkit.simulated_devices.DeviceAdvertiser)
    bastion: Optional[Bastion] = None  # a forwarding-only jump host (real sshd), in the way from "behind-bastion"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def stack_file(self) -> Path:
        return self.project / f"Pulumi.{STACK}.yaml"

    @property
    def kube(self) -> Api:
        return self.plane.kube()

    def env(self) -> dict[str, str]:
        (self.root / "state").mkdir(exist_ok=True)
        return cli_env(self.root / "state", PASSPHRASE, self.plane.kubeconfig)

    def config(self) -> dict:
        """The stack's plain config, keys without the project prefix (secure values left out)."""
        values = yaml.safe_load(self.stack_file.read_text()).get("config", {})
        return {k.split(":", 1)[1]: v for k, v in values.items() if not (isinstance(v, dict) and "secure" in v)}

    def write_config(self, config: dict) -> None:
        """Replace the plain config, keeping what the CLI wrote (encryption salt, secure values)."""
        current = yaml.safe_load(self.stack_file.read_text()) if self.stack_file.exists() else {}
        kept = {k: v for k, v in (current.get("config") or {}).items() if isinstance(v, dict) and "secure" in v}
        current["config"] = {**{f"ascend-npu:{k}": v for k, v in config.items()}, **kept}
        # Whole or not at all: the simulated device manager reads this file from its own thread.
        scratch = self.stack_file.with_suffix(".yaml.tmp")
        scratch.write_text(yaml.safe_dump(current, sort_keys=False))
        scratch.replace(self.stack_file)

    def pulumi(self, *args: str, program: bool = True, check: bool = True, stdin: Optional[str] = None,
               timeout: float = 1800, extra_resources: Optional[Path] = None,
               extra_env: Optional[dict[str, str]] = None) -> Run:
        """The real CLI in the project folder; with `program`, this program served to it (engine.program_host)."""
        env, words = {**self.env(), **(extra_env or {})}, [str(BIN / "pulumi"), *args]
        if extra_resources is not None:
            env["ASCEND_NPU_EXTRA_RESOURCES"] = str(extra_resources)
        start = time.monotonic()
        if program:
            with ProgramHost(cwd=self.project, env=env) as host:
                words += ["--client", host.address]
                done = subprocess.run(words, cwd=self.project, env=env, input=stdin, capture_output=True, text=True,
                                      timeout=timeout)
        else:
            done = subprocess.run(words, cwd=self.project, env=env, input=stdin, capture_output=True, text=True,
                                  timeout=timeout)
        run = Run(list(args), done.returncode, done.stdout + done.stderr, time.monotonic() - start)
        self.runs.append(run)
        with (self.root / "pulumi.log").open("a") as log:
            log.write(f"\n$ pulumi {' '.join(args)}  (exit {run.code}, {run.seconds:.1f} s)\n{run.out}\n")
        print(f"e2e: pulumi {' '.join(args[:2])}: exit {run.code} in {run.seconds:.1f} s", flush=True)
        if check and run.code != 0:
            raise AssertionError(f"pulumi {' '.join(args)} exited {run.code}:\n{run.out[-6000:]}")
        return run

    def set_key(self, key: Path) -> None:
        """The stack's SSH key, set as users set it: `pulumi config set --secret sshPrivateKey` from stdin."""
        self.pulumi("config", "set", "--secret", "sshPrivateKey", "--stack", STACK, program=False,
                    stdin=key.read_text())

    def up(self, *extra: str, **options) -> Run:
        return self.pulumi("up", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive", *extra, **options)

    def preview(self, *extra: str, **options) -> Run:
        return self.pulumi("preview", "--stack", STACK, "--non-interactive", *extra, **options)

    def install_starts(self, name: str) -> list[float]:
        """When each installer run on the node started (the fake installer's own log)."""
        log = self.nodes[name].root / LOGS / "installer-starts.log"
        return [float(line.split()[0]) for line in log.read_text().splitlines()] if log.exists() else []

    def config_node_names(self) -> list[str]:
        return [node["name"] for node in self.config()["nodes"]]

    def node_labels(self, name: str) -> dict:
        return self.kube.get(f"/api/v1/nodes/{name}")["metadata"].get("labels", {})

    def node_object(self, name: str) -> dict:
        return self.kube.get(f"/api/v1/nodes/{name}")

    def cordoned(self, name: str) -> bool:
        return bool(self.node_object(name)["spec"].get("unschedulable"))

    def uninstalls(self, name: str) -> list:
        """The installer runs on the node that uninstalled something."""
        return [call for call in self.nodes[name].installer_calls() if "--uninstall" in call["args"]]

    def install_counts(self, names) -> dict[str, int]:
        return {name: len(self.install_starts(name)) for name in names}

    def timeline(self, title: str, output: str, names, since: str) -> list[str]:
        """The drain's and the host steps' milestones since SINCE, printed and kept in timeline.txt."""
        lines = work.timeline(output, {name: self.nodes[name].root for name in names}, since)
        with (self.root / "timeline.txt").open("a") as out:
            out.write(f"\n# {title}\n" + "\n".join(lines) + "\n")
        print(f"e2e: {title}:\n" + "\n".join(lines), flush=True)
        return lines

    def installed(self, name: str, kind: str) -> str | None:
        """The version of `kind` the node has now (read from its version files), or None."""
        return ascend_files.installed(self.nodes[name].root, kind, "aarch64")


def copy_project(project: Path) -> None:
    """The project as a checkout has it: the project file the CLI reads, and linked, the program, its components and
    its virtualenv, which the program host runs from this folder as the language host would (the drain and host
    steps run `.venv/bin/python -m components...` here too)."""
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    for name in (".venv", "components", "__main__.py"):
        (project / name).symlink_to(REPO / name)


def node_entry(name: str, node: FakeNode, runtime: str = "containerd") -> dict:
    return {"name": name, "address": node.address, "hostKey": node.host_key, "chip": CHIPS.get(name, "910B"),
            "arch": "aarch64", "npuCount": 8, "containerRuntime": runtime}


def base_config(world: World, names: list[str]) -> dict:
    """The stack the run starts from: every node of `names` at the older release set (day 2 upgrades to NEW),
    upload from the fake packages, this cluster."""
    return {
        "cluster": {"name": "e2e", "namespace": NAMESPACE, "containerRuntime": "containerd",
                    "kubeContext": world.plane.context},
        "ssh": {"user": "root", "port": world.port},
        # The last node runs Docker (daemon.json, cri-dockerd), the others containerd.
        "nodes": [node_entry(name, world.nodes[name], runtime="docker" if name == names[-1] else "containerd")
                  for name in names],
        "versions": in_release_set(OLD),
        "packages": {"source": "upload", "directory": str(world.packages.directory),
                     "files": world.packages.files_for(OLD)},
        "rollout": {"canaries": [names[0]], "maxParallel": 1},
        "monitoring": {"prometheusOperator": True},
        # One Job per chip type (kwok runs its pod; no image is pulled): CANN images built for each chip.
        "validation": {"images": {chip: {"repository": "registry.e2e.example/ascend/cann",
                                         "tag": f"{OLD['cann']}-{chip.lower()}-ubuntu22.04-py3.10"}
                                  for chip in ("910B", "310P")}},
    }
