"""The cluster layer as one Pulumi component: the built objects, node labels, and the edges between them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.all_objects import cluster_objects
from components.cluster.common.node_labels import CHIP, CONTAINER_RUNTIME, node_labels, node_taints
from components.cluster.pulumi_resources import register
from components.cluster.values_contract import chart_values
from components.config import StackSpec
from components.config.hosts import NodeSpec

RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
COMPONENT = "app.kubernetes.io/component"


@dataclass(frozen=True)
class AscendClusterArgs:
    """The stack spec, the provider of its cluster, and the nodes already ready (the rest via `label_node`)."""

    spec: StackSpec
    provider: k8s.Provider
    node_ready: Mapping[str, Sequence[pulumi.Resource]] = field(default_factory=dict)
    taint_nodes: bool = False


def _check_node(nodes: Mapping[str, NodeSpec], node: str, labelled: Mapping[str, object]) -> NodeSpec:
    """The spec of a node about to be labelled; an unknown or already labelled node is a wiring error."""
    if node not in nodes:
        raise ValueError(f"cannot label '{node}': not a node of the spec ({', '.join(nodes)})")
    if node in labelled:
        raise ValueError(f"cannot label '{node}' twice")
    return nodes[node]


class AscendCluster(pulumi.ComponentResource):
    """Namespace, RBAC, device plugin, exporter, monitoring, validation Job and each node's readiness labels."""

    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: AscendClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("ascend-npu:index:AscendCluster", name, None, opts)
        self._name, self._spec, self._taint_nodes = name, args.spec, args.taint_nodes
        self._nodes = {n.name: n for n in self._spec.nodes}
        self.values = chart_values(self._spec)
        self._child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        objects = cluster_objects(self.values)

        self.namespace_resource = register(f"{name}-namespace", objects[0], self._child)
        self.namespace = self.namespace_resource.metadata.name
        self.node_labels = {n.name: node_labels(n, self._spec.versions) for n in self._spec.nodes}
        self.node_patches: dict[str, k8s.core.v1.NodePatch] = {}
        self.device_plugins: dict[str, pulumi.CustomResource] = {}
        self.exporters: dict[str, pulumi.CustomResource] = {}
        self.runtime_class: Optional[pulumi.CustomResource] = None
        self.validation_jobs: dict[str, pulumi.CustomResource] = {}
        self._validation_job_objects: dict[str, dict[str, Any]] = {}  # by chip, until its canary's labels exist
        self._validation_rbac: list[pulumi.Resource] = []
        self._register_objects(name, objects[1:], self._child)
        for node, ready in args.node_ready.items():
            self.label_node(node, ready)
        self.validation_job_names = {chip: job["metadata"]["name"] for chip, job in self._validation_job_objects.items()}
        self.register_outputs({
            "namespace": self.namespace,
            "devicePlugins": {chip: ds.metadata.name for chip, ds in self.device_plugins.items()},
            "exporters": {engine: ds.metadata.name for engine, ds in self.exporters.items()},
            "validationJobs": self.validation_job_names,
            "nodeLabels": self.node_labels,
        })

    def label_node(self, node_name: str, ready: Sequence[pulumi.Resource]) -> k8s.core.v1.NodePatch:
        """The node's labels (and optional taint), applied once `ready` (its host steps) succeeded.

        Called as each node's host steps are built, so a patch never waits, registered but pending,
        for a wave that does not exist yet. A chip's validation Job follows its canary's patch.
        """
        node = _check_node(self._nodes, node_name, self.node_patches)
        patch = k8s.core.v1.NodePatch(
            f"{self._name}-node-{node.name}",
            # The project owns these labels: forcing takes them over from an earlier `kubectl label`.
            metadata={"name": node.name, "labels": self.node_labels[node.name],
                      "annotations": {"pulumi.com/patchForce": "true"}},
            spec={"taints": node_taints(node)} if self._taint_nodes else None,
            opts=pulumi.ResourceOptions.merge(self._child, pulumi.ResourceOptions(depends_on=list(ready))))
        self.node_patches[node.name] = patch
        for chip in self._validation_job_objects:
            if node.name == self.values["validation"]["jobs"][chip]["node"]:
                self._register_validation_job(chip, patch)
        return patch

    def _register_validation_job(self, chip: str, canary_patch: k8s.core.v1.NodePatch) -> None:
        """A chip's Job after its device plugin, the RuntimeClass, its RBAC and its canary's labels."""
        obj = self._validation_job_objects[chip]
        after = [*self._validation_rbac, self.device_plugins[chip], canary_patch]
        if self.runtime_class is not None:
            after.append(self.runtime_class)
        # Pulumi waits for the Job to complete; let it wait as long as the Job may run.
        timeouts = pulumi.CustomTimeouts(create=f"{self.values['validation']['timeoutSeconds'] + 120}s")
        self.validation_jobs[chip] = self._register(self._name, obj, self._child, after, timeouts)

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
            elif kind == "Job":  # registered with its canary's labels, see label_node
                self._validation_job_objects[labels[CHIP]], self._validation_rbac = obj, after
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
        if obj["kind"] == "Job":  # one logical Job per chip: a new name (new versions) replaces it
            suffix = f"job-validation-{obj['metadata']['labels'][CHIP].lower()}"
        if namespace == self.values["namespace"]:
            meta["namespace"] = self.namespace
        elif namespace:
            suffix = f"{obj['kind'].lower()}-{namespace}-{meta['name']}"
        opts = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(after),
                                                                          custom_timeouts=timeouts))
        return register(f"{name}-{suffix}", {**obj, "metadata": meta}, opts)
