"""The cluster side: allocatable NPUs, the node agents, Pending NPU Pods, drains left behind, the RuntimeClass."""
from __future__ import annotations

from typing import Optional

from components.cluster.common.node_labels import READY, RESOURCE_NAMES
from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.doctor.findings import CLUSTER, Finding
from components.drain import node_state
from components.drain.pods import NPU_PREFIX, npu_requests

AGENTS = {"device-plugin": ("7.1", "the device plugin"), "exporter": ("6", "the exporter")}
BUSY_STATES = (node_state.DRAINING, node_state.DRAIN_FAILED, node_state.UPGRADING, node_state.LEAVING)


def _allocatable(node: dict) -> dict[str, int]:
    found = {}
    for name, value in ((node.get("status") or {}).get("allocatable") or {}).items():
        if name.startswith(NPU_PREFIX):
            try:
                found[name] = int(value)
            except ValueError:
                continue
    return found


def node_findings(spec: StackSpec, node: NodeSpec, obj: Optional[dict], chips: Optional[int],
                  agents: dict[str, list[dict]]) -> list[Finding]:
    """One node's API findings: it exists, advertises its NPUs, runs its agents, is not left cordoned by a drain."""
    if obj is None:
        return [Finding("7.1", node.name, "node", "no Node of this name in the cluster",
                        "the server must have joined the cluster under the name the stack gives it (`kubectl get "
                        "nodes`); fix the name in nodes[] or join the server")]
    found, labels = [], obj["metadata"].get("labels") or {}
    resource, want = RESOURCE_NAMES[node.chip.value], chips if chips is not None else node.npu_count
    have = _allocatable(obj).get(resource, 0)
    if labels.get(READY) == "true" and have != want:
        found.append(Finding("7.1", node.name, "allocatable", f"allocatable {resource} is {have}, the host has "
                             f"{want} chip(s)", "read the device plugin Pod's log on this node (it lists the "
                             "devices it found); an unhealthy chip is withheld"))
    for component, (symptom, title) in AGENTS.items():
        if component == "exporter" and not spec.exporter.enabled:
            continue
        found += _agent(node.name, component, symptom, title, agents.get(component, []),
                        labels.get(READY) == "true")
    state = labels.get(node_state.STATE)
    if state in BUSY_STATES:
        cordon = "cordoned" if (obj.get("spec") or {}).get("unschedulable") else "not cordoned"
        found.append(Finding("upgrade", node.name, "drain", f"{node_state.STATE}={state}, {cordon}: the last `up` "
                             "stopped here (a drain that timed out, or a host step that failed)",
                             "fix what the last `up` named for this node, then `pulumi up` again: it resumes and "
                             "uncordons the node once it verifies"))
    return found


def _agent(node: str, component: str, symptom: str, title: str, pods: list[dict], ready: bool) -> list[Finding]:
    mine = [p for p in pods if (p.get("spec") or {}).get("nodeName") == node]
    if not mine:
        return [Finding(symptom, node, component, f"no {title} Pod on this node", "the DaemonSet selects nodes "
                        f"labelled {READY}=true: check the node's labels and `kubectl describe ds`")] if ready else []
    found = []
    for pod in mine:
        name = pod["metadata"]["name"]
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            last = ((status.get("lastState") or {}).get("terminated")) or {}
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting or not status.get("ready", False):
                why = waiting.get("reason") or "not ready"
                found.append(Finding(symptom, node, component, f"{name}: {status['name']} is {why}"
                                     + (f" ({waiting.get('message')})" if waiting.get("message") else ""),
                                     f"`kubectl logs {name} -n {pod['metadata']['namespace']}`"))
            if status.get("restartCount", 0) > 0:
                said = ": ".join(x for x in (last.get("reason"), last.get("message")) if x) or "no message"
                found.append(Finding(symptom, node, component, f"{name}: {status['name']} restarted "
                                     f"{status['restartCount']} time(s), last exit {last.get('exitCode', '?')} "
                                     f"({said})", f"`kubectl logs --previous {name} -n "
                                     f"{pod['metadata']['namespace']}`"))
    return found


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Whether a toleration matches the taint (core/v1 Toleration.ToleratesTaint)."""
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def pending_findings(pods: list[dict], nodes: list[dict]) -> list[Finding]:
    """Pending Pods asking for NPUs: a resource name no node advertises, or only tainted nodes that have it."""
    counts = {n["metadata"]["name"]: _allocatable(n) for n in nodes}
    advertised: dict[str, set[str]] = {}
    for name, resources in counts.items():
        for resource, count in resources.items():
            found = advertised.setdefault(resource, set())
            if count > 0:
                found.add(name)
    found = []
    for pod in pods:
        wants = npu_requests(pod)
        if not wants or (pod.get("status") or {}).get("phase") != "Pending" or (pod.get("spec") or {}).get("nodeName"):
            continue
        name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        unknown = [r for r in wants if not advertised.get(r)]
        if unknown:
            offered = ", ".join(sorted(r for r, ns in advertised.items() if ns)) or "none"
            found.append(Finding("7.2", CLUSTER, "pending", f"{name} asks for {', '.join(unknown)}, which no node "
                                 f"advertises (advertised: {offered})", "write the resource name a node advertises "
                                 "(`kubectl describe node`), e.g. huawei.com/Ascend910 for 910B"))
            continue
        able = [n for n in nodes if all(n["metadata"]["name"] in advertised[r] for r in wants)]
        blocking = {n["metadata"]["name"]: [t for t in (n.get("spec") or {}).get("taints") or []
                                            if t.get("effect") in ("NoSchedule", "NoExecute")
                                            and not tolerates((pod.get("spec") or {}).get("tolerations"), t)]
                    for n in able}
        if able and all(blocking.values()):
            first = next(iter(blocking.items()))
            taint = first[1][0]
            found.append(Finding("7.2", CLUSTER, "pending", f"{name}: every node with {', '.join(wants)} is tainted "
                                 f"without a toleration in the Pod (e.g. {first[0]}: {taint.get('key')}="
                                 f"{taint.get('value', '')}:{taint.get('effect')})", "add a toleration for that "
                                 "taint to the Pod, or remove the taint"))
    return found
