"""The cluster layer as one Pulumi component: the built objects, node labels, and the edges between them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.node_labels import CHIP, CONTAINER_RUNTIME, node_labels, node_taints
from components.cluster.objects import cluster_objects
from components.cluster.typed import register
from components.cluster.values import chart_values
from components.spec import StackSpec
from components.spec.hosts import NodeSpec

RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
COMPONENT = "app.kubernetes.io/component"


@dataclass(frozen=True)
class AscendClusterArgs:
    """The stack spec, the provider of its cluster, and per node the host resources that make it ready."""

    spec: StackSpec
    provider: k8s.Provider
    node_ready: Mapping[str, Sequence[pulumi.Resource]]
    taint_nodes: bool = False


def _check_nodes(spec: StackSpec, node_ready: Mapping[str, Sequence[pulumi.Resource]]) -> None:
    names = {n.name for n in spec.nodes}
    missing, unknown = sorted(names - set(node_ready)), sorted(set(node_ready) - names)
    if missing or unknown:
        raise ValueError(f"node_ready must name every node of the spec and no other; missing: {missing or 'none'}, "
                         f"unknown: {unknown or 'none'}")


class AscendCluster(pulumi.ComponentResource):
    """Namespace, RBAC, device plugin, exporter, monitoring, validation Job and each node's readiness labels."""

    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: AscendClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("ascend-npu:index:AscendCluster", name, None, opts)
        spec = args.spec
        _check_nodes(spec, args.node_ready)
        self.values = chart_values(spec)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        objects = cluster_objects(self.values)

        self.namespace_resource = register(f"{name}-namespace", objects[0], child)
        self.namespace = self.namespace_resource.metadata.name
        self.node_labels = {n.name: node_labels(n, spec.versions) for n in spec.nodes}
        self.node_patches = {n.name: self._node_patch(name, n, args, child) for n in spec.nodes}
        self.device_plugins: dict[str, pulumi.CustomResource] = {}
        self.exporters: dict[str, pulumi.CustomResource] = {}
        self.runtime_class: Optional[pulumi.CustomResource] = None
        self.validation_job: Optional[pulumi.CustomResource] = None
        self._register_objects(name, objects[1:], child)
        self.register_outputs({
            "namespace": self.namespace,
            "devicePlugins": {chip: ds.metadata.name for chip, ds in self.device_plugins.items()},
            "exporters": {engine: ds.metadata.name for engine, ds in self.exporters.items()},
            "validationJob": self.validation_job.metadata.name if self.validation_job else None,
            "nodeLabels": self.node_labels,
        })

    def _node_patch(self, name: str, node: NodeSpec, args: AscendClusterArgs,
                    child: pulumi.ResourceOptions) -> k8s.core.v1.NodePatch:
        """The node's labels (and optional taint), applied once every host step of that node succeeded."""
        return k8s.core.v1.NodePatch(
            f"{name}-node-{node.name}",
            # The project owns these labels: forcing takes them over from an earlier `kubectl label`.
            metadata={"name": node.name, "labels": self.node_labels[node.name],
                      "annotations": {"pulumi.com/patchForce": "true"}},
            spec={"taints": node_taints(node)} if args.taint_nodes else None,
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                depends_on=list(args.node_ready[node.name]))))

    def _register_objects(self, name: str, objects: list[dict[str, Any]], child: pulumi.ResourceOptions) -> None:
        """Every object after the Namespace: RBAC before its workloads, the Job after what it proves."""
        rbac: dict[str, list[pulumi.Resource]] = {}  # by component label: a workload waits for its own
        priority_classes: dict[str, pulumi.Resource] = {}
        for obj in objects:
            kind, labels = obj["kind"], obj["metadata"]["labels"]
            after = list(rbac.get(labels[COMPONENT], []))
            if kind == "DaemonSet":
                priority = obj["spec"]["template"]["spec"]["priorityClassName"]
                after += [priority_classes[priority]] if priority in priority_classes else []
                resource = self._register(name, obj, child, after)
                if labels[COMPONENT] == "device-plugin":
                    self.device_plugins[labels[CHIP]] = resource
                else:
                    self.exporters[labels[CONTAINER_RUNTIME]] = resource
            elif kind == "Job":
                after += [*self.device_plugins.values(), self.node_patches[self.values["validation"]["node"]]]
                if self.runtime_class is not None:
                    after.append(self.runtime_class)
                # Pulumi waits for the Job to complete; let it wait as long as the Job may run.
                timeouts = pulumi.CustomTimeouts(create=f"{self.values['validation']['timeoutSeconds'] + 120}s")
                self.validation_job = self._register(name, obj, child, after, timeouts)
            else:
                resource = self._register(name, obj, child, [])
                if kind in RBAC_KINDS:
                    rbac.setdefault(labels[COMPONENT], []).append(resource)
                elif kind == "PriorityClass":
                    priority_classes[obj["metadata"]["name"]] = resource
                elif kind == "RuntimeClass":
                    self.runtime_class = resource

    def _register(self, name: str, obj: dict[str, Any], child: pulumi.ResourceOptions,
                  after: Sequence[pulumi.Resource], timeouts: Optional[pulumi.CustomTimeouts] = None
                  ) -> pulumi.CustomResource:
        """Register one object; objects in the agents' namespace take its name from the Namespace resource."""
        meta = dict(obj["metadata"])
        namespace = meta.get("namespace")
        suffix = f"{obj['kind'].lower()}-{meta['name']}"
        if obj["kind"] == "Job":
            suffix = "job-validation"  # one logical Job: a new name (new versions) replaces it
        if namespace == self.values["namespace"]:
            meta["namespace"] = self.namespace
        elif namespace:
            suffix = f"{obj['kind'].lower()}-{namespace}-{meta['name']}"
        opts = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(after),
                                                                          custom_timeouts=timeouts))
        return register(f"{name}-{suffix}", {**obj, "metadata": meta}, opts)
