"""`make cluster`: a local control plane on loopback with one simulated node per stack node, or stop it."""
from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Callable

import yaml

from components.kubeapi.client import Api, wait_for
from engine.cache import KWOK_STAGES, REPO
from engine.control_plane import ControlPlane
from engine.pulumi_cli import versions

CRD_DIR = REPO / "tests" / "schemas" / "prometheus-operator-v0.93.0"  # vendored, with its source and licence
# What a user's cluster with the Prometheus Operator has before this stack arrives.
CRDS = ("monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml")
PREEXISTING_NAMESPACES = ("monitoring",)
ARCH_LABEL = {"aarch64": "arm64", "x86_64": "amd64"}
# Simulated hardware of every node: what a kubelet would report (the NPUs are added by the device plugin step).
NODE_CAPACITY = {"cpu": "192", "memory": "1536Gi", "pods": "110", "ephemeral-storage": "3Ti"}


def stack_nodes(stack: str) -> list[dict]:
    """The `ascend-npu:nodes` list of Pulumi.<stack>.yaml."""
    config = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
    return list(config.get("ascend-npu:nodes") or [])


def simulated_node(node: dict) -> dict:
    """The Node object a kubelet would register for this stack node, managed by kwok."""
    arch = ARCH_LABEL.get(str(node.get("arch", "x86_64")), "amd64")
    name = node["name"]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name,
                     "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": arch, "beta.kubernetes.io/arch": arch,
                                "beta.kubernetes.io/os": "linux", "type": "kwok"}},
        "status": {"capacity": dict(NODE_CAPACITY), "allocatable": dict(NODE_CAPACITY),
                   "nodeInfo": {"architecture": arch, "operatingSystem": "linux",
                                "kubeletVersion": versions()["KUBERNETES_VERSION"], "containerRuntimeVersion": "containerd://1.7.24"}},
    }


def prepare(kube: Api) -> None:
    """The CRDs and namespaces a user's cluster already has."""
    for name in PREEXISTING_NAMESPACES:
        kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for file in CRDS:
        crd = yaml.safe_load((CRD_DIR / file).read_text())
        kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        wait_for(f"CRD {crd['metadata']['name']} established", lambda crd=crd: any(
            c["type"] == "Established" and c["status"] == "True" for c in kube.get(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}")
            .get("status", {}).get("conditions") or []), 60)


def register_nodes(kube: Api, nodes: list[dict], tell: Callable[[str], None] = partial(print, flush=True)) -> None:
    """Each node registered (as its kubelet would) and Ready under kwok, a line told for each."""
    for node in nodes:
        kube.create("/api/v1/nodes", simulated_node(node))
    for node in nodes:
        wait_for(f"node {node['name']} Ready", lambda node=node: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in kube.get(f"/api/v1/nodes/{node['name']}").get("status", {}).get("conditions") or []), 120)
        tell(f"cluster: node {node['name']} registered and Ready (simulated kubelet)")


def kwok_stages_dir() -> Path:
    """kwok's stage definitions, which `make engine` keeps beside the kwok it built."""
    if not (KWOK_STAGES / ".complete").exists():
        sys.exit(f"cluster: kwok's stage definitions are not in {KWOK_STAGES}: run `make engine` first")
    return KWOK_STAGES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.cluster", description=__doc__)
    parser.add_argument("action", choices=("start", "stop", "status", "nodes"))
    parser.add_argument("--stack", default="e2e", help="register the nodes of Pulumi.<stack>.yaml")
    parser.add_argument("--home", type=Path, default=REPO / ".cluster",
                        help="the cluster's files (default: .cluster in this clone)")
    args = parser.parse_args(argv)
    plane = ControlPlane(args.home)
    if args.action == "stop":
        plane.stop()
        return 0
    if args.action == "status":
        running = plane.running()
        print(f"cluster: running: {', '.join(running) or 'nothing'}; kubeconfig {plane.kubeconfig}")
        return 0 if running else 1
    if args.action == "start":
        plane.start(kwok_stages_dir())
        prepare(plane.kube())
    register_nodes(plane.kube(), stack_nodes(args.stack))
    print(f"cluster: ready; export KUBECONFIG={plane.kubeconfig} (context {plane.context})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
