"""The node agents (the DaemonSets of the operand registry): a Pod on each ready node, ready, not restarting lately."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Optional

from components.cluster.common.node_labels import READY
from components.cluster.operands import REGISTRY, Registry
from components.cluster.values_contract import chart_values
from components.config import StackSpec
from components.config.invocation import recorded
from components.doctor.findings import ERROR, WARNING, Finding, Kind

AGENT_MISSING = Kind("agent-missing", ERROR, "a node agent (device plugin, exporter) has no Pod on a ready node")
NOT_READY = Kind("agent-not-ready", ERROR, "a node agent's container is not ready")
RESTARTING = Kind("agent-restarting", WARNING, "a node agent's container restarted within the recent window")
NOT_PULLED = Kind("image-not-pulled", ERROR, "a node agent's image cannot be pulled on its node")
KINDS = (AGENT_MISSING, NOT_READY, RESTARTING, NOT_PULLED)
# The kubelet's image errors (kubernetes pkg/kubelet/images/types.go; RegistryUnavailable until 1.26).
PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "ImageInspectError", "ErrImageNeverPull",
                          "InvalidImageName", "RegistryUnavailable"})


def pull_fix() -> str:
    """How to find why an image is not pulled, naming the stack the doctor was run for."""
    ran = recorded()
    return (f"`make bundle STACK={ran.stack if ran else '<stack>'} CHECK=site` shows whether the site registry holds "
            "the image; check the Pod's imagePullSecrets exist in its namespace; without a site registry the node must "
            "reach the image's registry (docs/air-gapped.md)")


@dataclass(frozen=True)
class Agent:
    """An operand that runs DaemonSets: its name, namespace and one label selector per DaemonSet."""

    operand: str
    namespace: str
    selectors: tuple[str, ...]


def agents(spec: StackSpec, registry: Registry = REGISTRY) -> list[Agent]:
    """The enabled operands of the registry whose workloads are DaemonSets, as the stack builds them."""
    values, found = chart_values(spec), []
    for operand in registry.operands:
        if not operand.enabled(values):
            continue
        sets = [w for w in operand.workloads(values) if w.get("kind") == "DaemonSet"]
        if sets:
            selectors = tuple(",".join(f"{k}={v}" for k, v in sorted(d["spec"]["selector"]["matchLabels"].items()))
                              for d in sets)
            found.append(Agent(operand.name, sets[0]["metadata"]["namespace"], selectors))
    return found


def finished(status: dict) -> Optional[datetime]:
    """When the container's last run ended (lastState.terminated.finishedAt), or None."""
    text = (((status.get("lastState") or {}).get("terminated")) or {}).get("finishedAt")
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) if text else None
    except ValueError:
        return None


def check(node: str, agent: str, pods: list[dict], ready: bool, now: datetime, window: timedelta) -> list[Finding]:
    """AGENT's Pods on NODE (PODS: every Pod of the agent); a restart counts when it ended within WINDOW of NOW."""
    mine = [p for p in pods if (p.get("spec") or {}).get("nodeName") == node]
    if not mine:
        return [AGENT_MISSING(node, f"no {agent} Pod on this node", f"the DaemonSet selects nodes labelled "
                              f"{READY}=true: check the node's labels and `kubectl describe ds`")] if ready else []
    found = []
    for pod in mine:
        name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            last = ((status.get("lastState") or {}).get("terminated")) or {}
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in PULL_REASONS:
                found.append(NOT_PULLED(node, f"{agent} {name}: {status['name']} is {waiting['reason']} for "
                                        f"{status.get('image') or 'its image'}"
                                        + (f" ({waiting.get('message')})" if waiting.get("message") else ""),
                                        pull_fix()))
            elif waiting or not status.get("ready", False):
                why = waiting.get("reason") or "not ready"
                found.append(NOT_READY(node, f"{agent} {name}: {status['name']} is {why}"
                                       + (f" ({waiting.get('message')})" if waiting.get("message") else ""),
                                       f"`kubectl logs {name} -n {namespace}`"))
            ended = finished(status)
            if status.get("restartCount", 0) > 0 and ended is not None and now - ended <= window:
                said = ": ".join(x for x in (last.get("reason"), last.get("message")) if x) or "no message"
                ago = max(0, int((now - ended).total_seconds() // 60))
                found.append(RESTARTING(node, f"{agent} {name}: {status['name']} restarted {status['restartCount']} "
                                        f"time(s), the last {ago} min ago (within {int(window.total_seconds() // 60)} "
                                        f"min), exit {last.get('exitCode', '?')} ({said})",
                                        f"`kubectl logs --previous {name} -n {namespace}`"))
    return found
