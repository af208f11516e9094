"""The platform component: the root every layer of ascend-npu plugs into."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.namespace import namespace_object
from components.rollout import plan_waves
from components.spec import StackSpec


@dataclass(frozen=True)
class AscendNpuPlatformArgs:
    """What the platform is built from: the validated stack spec."""

    spec: StackSpec


class AscendNpuPlatform(pulumi.ComponentResource):
    """One cluster's NPU estate: provider, namespace, and (as they land) the host and cluster layers."""

    namespace: pulumi.Output[str]
    waves: list[list[str]]

    def __init__(self, name: str, args: AscendNpuPlatformArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("ascend-npu:index:AscendNpuPlatform", name, None, opts)
        spec = args.spec
        self.waves = [[n.name for n in wave] for wave in plan_waves(spec.nodes, spec.canaries,
                                                                     spec.rollout.max_parallel)]
        self.provider = k8s.Provider(f"{name}-k8s", context=spec.cluster.kube_context,
                                     opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        ns = namespace_object(spec)
        self.namespace_resource = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata=ns["metadata"], opts=child)
        self.namespace = self.namespace_resource.metadata.apply(lambda m: m["name"])
        self.register_outputs({"namespace": self.namespace, "waves": self.waves})
