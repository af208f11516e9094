"""The cluster side: what the API is asked once, then each node's Node, agents and upgrade state, and the cluster's."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Optional

from components.cluster.common.node_labels import READY
from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.doctor.checks import agents, node, pending, reach, runtime_class, upgrade
from components.doctor.findings import Finding
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint

pending_findings = pending.check
tolerates = pending.tolerates


@dataclass
class ClusterView:
    """What the API answered: nodes by name, the agents (operand registry) and their Pods, Pending Pods, the
    RuntimeClass; `api` is None when it did not answer."""

    api: Optional[Api] = None
    nodes: dict[str, dict] = field(default_factory=dict)
    agents: list[agents.Agent] = field(default_factory=list)
    pods: dict[str, list[dict]] = field(default_factory=dict)
    pending: list[dict] = field(default_factory=list)
    runtime_class: Optional[dict] = None


def read_cluster(spec: StackSpec, findings: list[Finding]) -> ClusterView:
    """Everything the checks need from the API, read once; an empty view and `api-unreachable` when it fails."""
    view = ClusterView(agents=agents.agents(spec))
    try:
        api = Api(load_endpoint(spec.cluster.kube_context))
        view.nodes = {n["metadata"]["name"]: n for n in api.items("/api/v1/nodes")}
        for agent in view.agents:
            view.pods[agent.operand] = [pod for selector in agent.selectors for pod in api.items(
                f"/api/v1/namespaces/{agent.namespace}/pods", labelSelector=selector)]
        view.pending = list(api.items("/api/v1/pods", fieldSelector="status.phase=Pending"))
        if not spec.cluster.ascend_default_runtime:
            view.runtime_class = api.find(runtime_class.PATH)
        view.api = api
    except (KubeconfigError, ApiError) as err:
        findings.append(reach.api_unreachable(str(err)))
        return ClusterView(agents=view.agents)
    return view


def node_findings(spec: StackSpec, spec_node: NodeSpec, view: ClusterView, chips: Optional[int], now: datetime,
                  window: timedelta) -> list[Finding]:
    """One node's API findings: its Node, its agents' Pods, its upgrade state."""
    obj = view.nodes.get(spec_node.name)
    found = node.check(spec_node, obj, chips)
    if obj is None:
        return found
    ready = (obj["metadata"].get("labels") or {}).get(READY) == "true"
    for agent in view.agents:
        found += agents.check(spec_node.name, agent.operand, view.pods.get(agent.operand, []), ready, now, window)
    return found + upgrade.check(spec, spec_node.name, obj, now)


def cluster_findings(spec: StackSpec, view: ClusterView) -> list[Finding]:
    """The findings of no one node: the RuntimeClass, Pending NPU Pods."""
    return (runtime_class.check(spec.cluster.ascend_default_runtime, view.runtime_class)
            + pending.check(view.pending, list(view.nodes.values())))
