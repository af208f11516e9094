"""The platform component: the root of one cluster's graph, hosts and cluster layer wired together."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.component import AscendCluster, AscendClusterArgs
from components.host.layer import build_hosts
from components.spec import StackSpec


@dataclass(frozen=True)
class AscendNpuPlatformArgs:
    """What the platform is built from: the validated stack spec."""

    spec: StackSpec


class AscendNpuPlatform(pulumi.ComponentResource):
    """One cluster's NPU estate: every node's host steps in waves, then the cluster layer on verified nodes."""

    namespace: pulumi.Output[str]
    waves: list[list[str]]
    nodes: dict[str, pulumi.Output[dict]]

    def __init__(self, name: str, args: AscendNpuPlatformArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("ascend-npu:index:AscendNpuPlatform", name, None, opts)
        spec = args.spec
        self.provider = k8s.Provider(f"{name}-k8s", context=spec.cluster.kube_context,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.waves, self.hosts = build_hosts(name, spec, parent=self)
        self.cluster = AscendCluster(
            f"{name}-cluster",
            AscendClusterArgs(spec=spec, provider=self.provider,
                              node_ready={node: [host.verify] for node, host in self.hosts.items()},
                              taint_nodes=spec.cluster.taint_npu_nodes),
            opts=pulumi.ResourceOptions(parent=self))
        self.namespace = self.cluster.namespace
        self.nodes = {node: host.verified for node, host in self.hosts.items()}
        self.register_outputs({"namespace": self.namespace, "waves": self.waves, "nodes": self.nodes})
