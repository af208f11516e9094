"""The platform component: the root of one cluster's graph, hosts and cluster layer wired together."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.component import AscendCluster, AscendClusterArgs
from components.config import StackSpec
from components.host.layer import build_hosts

# The collector's pace for the program (gc.set_threshold): the SDK keeps every resource's outputs alive until
# the program ends, so the heap only grows, and at the default pace a 1000-node stack spends about 4 s of CPU
# rescanning it (a dozen full collections); young collections every 2,000 allocations and a full one at most
# every million bring that to about 1 s.
COLLECTOR_PACE = (2_000, 10, 50)
# Every resource's name starts with the root's, so the root's name must not follow the config: named after
# `cluster.name`, renaming the cluster gave every Kubernetes object a new URN, and the engine created each new
# one before deleting the old one with the same Kubernetes name (a server-side apply conflict on each).
ROOT_NAME = "ascend-npu"


def root_aliases(spec: StackSpec) -> list[pulumi.Alias]:
    """Stacks first brought up when the root was named after `cluster.name` keep their resources: each child's
    name starts with the root's, so the SDK derives every child's alias from this one."""
    return [] if spec.cluster.name == ROOT_NAME else [pulumi.Alias(name=spec.cluster.name)]


@dataclass(frozen=True)
class AscendNpuPlatformArgs:
    """What the platform is built from: the validated stack spec."""

    spec: StackSpec


class AscendNpuPlatform(pulumi.ComponentResource):
    """One cluster's NPU estate: every node's host steps in waves, then the cluster layer on verified nodes."""

    namespace: pulumi.Output[str]
    waves: list[list[str]]
    nodes: pulumi.Output[dict[str, pulumi.Output[dict]]]
    validation_jobs: dict[str, str]

    def __init__(self, name: str, args: AscendNpuPlatformArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("ascend-npu:index:AscendNpuPlatform", name, None, opts)
        spec = args.spec
        self.provider = k8s.Provider(f"{name}-k8s", context=spec.cluster.kube_context,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.cluster = AscendCluster(
            f"{name}-cluster",
            AscendClusterArgs(spec=spec, provider=self.provider, taint_nodes=spec.cluster.taint_npu_nodes),
            opts=pulumi.ResourceOptions(parent=self))
        # Each node is labelled as its host steps are built, gated on its own verify step.
        layer = build_hosts(name, spec, parent=self,
                            on_host=lambda node, host: self.cluster.label_node(node.name, [host.ready]))
        self.waves, self.hosts = layer.waves, layer.hosts
        self.namespace = self.cluster.namespace
        # One verify result per node (each its own output, unknown in preview), once every wave is built.
        self.nodes = layer.built.apply(lambda _: {node: self.hosts[node].verified for wave in self.waves
                                                  for node in wave})
        self.validation_jobs = self.cluster.validation_job_names
        # What verify found is the stack's `nodes` output (__main__.py) and verify's stdout; stored a third time
        # here, it cost about 0.9 KB a node in the state, written again at every checkpoint of an `up`.
        self.register_outputs({"namespace": self.namespace, "waves": self.waves,
                               "validationJobs": self.validation_jobs})
