"""The cluster layer as one Pulumi component: the registry's objects, node labels, and the edges between them."""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s
from pulumi_command import local

from components.cluster import operands
from components.cluster.all_objects import RBAC, SHARED, WORKLOAD, built_objects
from components.cluster.common.metadata import deployed_images, recommended_labels
from components.cluster.common.node_labels import node_labels, node_taints
from components.cluster.operands import CANARY, NAMESPACE, OWN_RBAC, PRIORITY_CLASS, RUNTIME_CLASS, Operand, Registry
from components.cluster.pulumi_resources import register
from components.cluster.values_contract import chart_values
from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.registry import CREATED_SECRET
from components.config.release_set import AGENTS, release_set
from components.labels.contract import LabelCall


@dataclass(frozen=True)
class AscendClusterArgs:
    """The stack spec, the provider of its cluster, and the nodes already ready (the rest via `label_node`)."""

    spec: StackSpec
    provider: k8s.Provider
    node_ready: Mapping[str, Sequence[pulumi.Resource]] = field(default_factory=dict)
    taint_nodes: bool = False
    registry: Optional[Registry] = None  # the project's operands unless given


def docker_config(registry: str, login: str) -> str:
    """The `.dockerconfigjson` of one registry login `user:password`, base64 as a Secret's data holds it."""
    user, _, password = login.strip().partition(":")
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    config = {"auths": {registry: {"username": user, "password": password, "auth": auth}}}
    return base64.b64encode(json.dumps(config, sort_keys=True).encode()).decode()


def stated_registries(values: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`{"images": {"registry", "registries"}}` (the site registry, and it plus every deployed image's own), or None."""
    site = values["images"]["registry"]
    if site is None:
        return None
    own = {image["registry"] for _, image in deployed_images(values) if image["registry"]}
    return {"images": {"registry": site, "registries": sorted({site, *own})}}


def stated_exceptions(spec: StackSpec) -> Optional[dict[str, Any]]:
    """`{"mindClusterExceptions": [{component, tag, reason}]}` for each agent kept from another MindCluster release
    by its `releaseOverride` (policies: mindcluster-release-set), or None."""
    chosen = release_set(spec.versions)
    agents = {"devicePlugin": spec.device_plugin, "exporter": spec.exporter if spec.exporter.enabled else None}
    kept = [{"component": AGENTS[key], "tag": agent.image.tag, "reason": agent.release_override.reason}
            for key, agent in agents.items()
            if agent is not None and agent.release_override is not None
            and agent.release != chosen.component(AGENTS[key])]
    return {"mindClusterExceptions": kept} if kept else None


def _check_node(nodes: Mapping[str, NodeSpec], node: str, labelled: Mapping[str, object]) -> NodeSpec:
    """The spec of a node about to be labelled; an unknown or already labelled node is a wiring error."""
    if node not in nodes:
        raise ValueError(f"cannot label '{node}': not a node of the spec ({', '.join(nodes)})")
    if node in labelled:
        raise ValueError(f"cannot label '{node}' twice")
    return nodes[node]


class AscendCluster(pulumi.ComponentResource):
    """Namespace, the registry's operands with their RBAC, and each node's readiness labels."""

    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: AscendClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        # Only a stack with images.registry states where its images come from (policies: allowed-registries); a
        # resource policy reads a component's inputs, a stack policy its outputs: both carry the statement.
        values = chart_values(args.spec)
        stated = {**(stated_registries(values) or {}), **(stated_exceptions(args.spec) or {})} or None
        super().__init__("ascend-npu:index:AscendCluster", name, stated, opts)
        self._name, self._spec, self._taint_nodes = name, args.spec, args.taint_nodes
        self._registry = args.registry or operands.REGISTRY
        self._nodes = {n.name: n for n in self._spec.nodes}
        self.values = values
        self._child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        built = built_objects(self.values, self._registry)

        namespace = next(b.obj for b in built if b.owner == NAMESPACE)
        self.namespace_resource = register(f"{name}-namespace", namespace, self._child)
        self.namespace = self.namespace_resource.metadata["name"]
        self.pull_secret = self._pull_secret() if self._spec.registry_credentials is not None else None
        self.node_labels = {n.name: node_labels(n, self._spec.versions) for n in self._spec.nodes}
        self.node_patches: dict[str, local.Command] = {}
        self.shared: dict[str, pulumi.CustomResource] = {}
        self._shared_names: dict[str, str] = {}
        self._rbac: dict[str, list[pulumi.Resource]] = {}  # by operand: its workloads wait for their own
        self.workloads: dict[str, dict[str, pulumi.CustomResource]] = {op.name: {} for op in self._registry.operands}
        self._workload_objects: dict[str, dict[str, dict[str, Any]]] = {op.name: {} for op in self._registry.operands}
        self._pending: dict[tuple[str, str], dict[str, Any]] = {}  # (operand, key) until its canary's labels exist
        for b in built:
            if b.owner != NAMESPACE:
                self._register_built(b.owner, b.part, b.obj)
        for node, ready in args.node_ready.items():
            self.label_node(node, ready)
        outputs = {op.output: self._workload_names(op) for op in self._registry.operands if op.output}
        self.validation_job_names = outputs.get("validationJobs", {})
        self.register_outputs({"namespace": self.namespace, **outputs, "nodeLabels": self.node_labels,
                               **(stated or {})})

    def label_node(self, node_name: str, ready: Sequence[pulumi.Resource]) -> local.Command:
        """The node's labels (and optional taint), applied once `ready` (its host steps) succeeded.

        Called as each node's host steps are built, so a label step never waits, registered but pending,
        for a wave that does not exist yet. A workload waiting for its canary follows that node's label step.
        A local command (components/labels), not a NodePatch: the provider stores a patched object whole, and a
        kubelet's Node (its images, conditions and managed fields) would be most of each node's state.
        """
        node = _check_node(self._nodes, node_name, self.node_patches)
        call = LabelCall("apply", node.name, self._spec.cluster.kube_context or None, self.node_labels[node.name],
                         node_taints(node) if self._taint_nodes else None)
        # A changed label (its environment) updates the step, which applies again under its own field manager.
        patch = local.Command(f"{self._name}-node-{node.name}", create=call.command(),
                              delete=call.released().command(), environment=call.environment(),
                              opts=pulumi.ResourceOptions(parent=self, depends_on=list(ready)))
        self.node_patches[node.name] = patch
        for (owner, key), obj in list(self._pending.items()):
            op = self._registry.operand(owner)
            if op.canary is not None and node.name == op.canary(self.values, key):
                del self._pending[(owner, key)]
                self.workloads[owner][key] = self._register_workload(op, key, obj, patch)
        return patch

    def _pull_secret(self) -> k8s.core.v1.Secret:
        """The dockerconfigjson Secret of `registryCredentials`, in the agents' namespace only, its data secret."""
        registry = self._spec.images.registry
        data = pulumi.Output.secret(self._spec.registry_credentials).apply(lambda login: docker_config(registry, login))
        labels = recommended_labels("registry", CREATED_SECRET, managed_by=self.values["managedBy"])
        return k8s.core.v1.Secret(f"{self._name}-secret-{CREATED_SECRET}", type="kubernetes.io/dockerconfigjson",
                                  metadata={"name": CREATED_SECRET, "namespace": self.namespace, "labels": labels},
                                  data={".dockerconfigjson": data}, opts=self._child)

    def _register_built(self, owner: str, part: str, obj: dict[str, Any]) -> None:
        """Shared, RBAC and extra objects wait for nothing; workloads for what their operand declares."""
        if part != WORKLOAD:
            resource = self._register(obj, [])
            if part == SHARED:
                self.shared[owner], self._shared_names[owner] = resource, obj["metadata"]["name"]
            elif part == RBAC:
                self._rbac.setdefault(owner, []).append(resource)
            return
        op = self._registry.operand(owner)
        labels = obj["metadata"]["labels"]
        key = labels[op.key] + (f"/{labels[op.variant]}" if op.variant and op.variant in labels else "")
        self._workload_objects[owner][key] = obj
        if CANARY in op.waits:  # registered by label_node
            self._pending[(owner, key)] = obj
        else:
            self.workloads[owner][key] = self._register_workload(op, key, obj)

    def _register_workload(self, op: Operand, key: str, obj: dict[str, Any],
                           canary_patch: Optional[pulumi.Resource] = None) -> pulumi.CustomResource:
        """One workload after what its operand waits for, in the order the operand declares it."""
        after: list[pulumi.Resource] = [self.pull_secret] if self.pull_secret is not None else []
        for wait in op.waits:
            if wait == OWN_RBAC:
                after += self._rbac.get(op.name, [])
            elif wait == PRIORITY_CLASS:
                named = obj["spec"]["template"]["spec"].get("priorityClassName")
                after += [self.shared[wait]] if wait in self.shared and named == self._shared_names[wait] else []
            elif wait == RUNTIME_CLASS:
                after += [self.shared[wait]] if wait in self.shared else []
            elif wait == CANARY:
                after += [canary_patch] if canary_patch else []
            else:  # every workload of the key, whatever its variant
                after += [w for k, w in self.workloads[wait].items() if k.split("/")[0] == key]
        timeouts = pulumi.CustomTimeouts(create=op.create_timeout(self.values)) if op.create_timeout else None
        stable = f"{obj['kind'].lower()}-{op.stable_name}-{key.lower()}" if op.stable_name else None
        return self._register(obj, after, timeouts, stable)

    def _workload_names(self, op: Operand) -> dict[str, Any]:
        """The operand's workloads by key; one waiting for its canary, maybe not registered yet, by its object."""
        if CANARY in op.waits:
            return {key: obj["metadata"]["name"] for key, obj in self._workload_objects[op.name].items()}
        return {key: resource.metadata["name"] for key, resource in self.workloads[op.name].items()}

    def _register(self, obj: dict[str, Any], after: Sequence[pulumi.Resource],
                  timeouts: Optional[pulumi.CustomTimeouts] = None, stable: Optional[str] = None
                  ) -> pulumi.CustomResource:
        """Register one object; objects in the agents' namespace take its name from the Namespace resource."""
        meta = dict(obj["metadata"])
        namespace = meta.get("namespace")
        suffix = stable or f"{obj['kind'].lower()}-{meta['name']}"
        if namespace == self.values["namespace"]:
            meta["namespace"] = self.namespace
        elif namespace:
            suffix = f"{obj['kind'].lower()}-{namespace}-{meta['name']}"
        opts = pulumi.ResourceOptions.merge(self._child, pulumi.ResourceOptions(depends_on=list(after),
                                                                                custom_timeouts=timeouts))
        return register(f"{self._name}-{suffix}", {**obj, "metadata": meta}, opts)
