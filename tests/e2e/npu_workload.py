"""Simulated NPU work for the drain scenarios: a training Pod holding one NPU (kwok runs it; no process uses a
device), the PodDisruptionBudget that guards it, the evictions it refused, and the upgrade timeline read back from
the run's own records and a plain preview's planned steps."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from components.kubeapi.client import Api, wait_for

WORKLOADS = "npu-workloads"
APP = "train"
# The drain tool's own lines (`2026-12-02T05:40:01Z drain NODE: ...`, which the CLI prints after the resource's
# name) and a node's run log lines (`2026-12-02T05:40:03Z [install] ...`).
DRAIN_LINE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (drain|uncordon|leave) (\S+): (.*)$", re.MULTILINE)
HOST_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) \[(install|verify)\] (.*)$")
STEP_LINE = re.compile(r"^ [-+~]+\s+\S+ (\S+) (create|update|delete|replace)\b", re.MULTILINE)
# kube-apiserver's request counter (its /metrics), where a refused eviction is one with subresource eviction, 429.
REQUESTS = re.compile(r'^apiserver_request_total\{([^}]*)\} (\d+)$', re.MULTILINE)


def run_npu_pod(kube: Api, node: str, resource: str, name: str) -> dict:
    """A Pod bound to NODE asking for one NPU, Running under kwok; returns it."""
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WORKLOADS}})
    kube.create(f"/api/v1/namespaces/{WORKLOADS}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": APP}},
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1,
                 "containers": [{"name": "train", "image": "registry.example/ascend/train:1",
                                 "resources": {"limits": {resource: "1"}, "requests": {resource: "1"}}}]}})
    return wait_for(f"pod {name} Running on {node}", lambda: _running(kube, name), 120)


def _running(kube: Api, name: str) -> dict | None:
    pod = kube.find(f"/api/v1/namespaces/{WORKLOADS}/pods/{name}")
    return pod if pod and pod.get("status", {}).get("phase") == "Running" else None


def pod(kube: Api, name: str) -> dict | None:
    return kube.find(f"/api/v1/namespaces/{WORKLOADS}/pods/{name}")


def guard(kube: Api, min_available: int) -> None:
    """The budget of the training Pods: with 1 and one Pod, no eviction is allowed; with 0, any is."""
    path = f"/apis/policy/v1/namespaces/{WORKLOADS}/poddisruptionbudgets"
    if kube.find(f"{path}/{APP}") is None:
        kube.create(path, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": APP},
                           "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": APP}}}})
    else:
        kube.merge_patch(f"{path}/{APP}", {"spec": {"minAvailable": min_available}})
    wait_for(f"budget {APP} observed at {min_available}", lambda: _observed(kube, path, min_available), 60)


def _observed(kube: Api, path: str, min_available: int) -> bool:
    pdb = kube.get(f"{path}/{APP}")
    status = pdb.get("status") or {}
    return status.get("observedGeneration") == pdb["metadata"]["generation"] and \
        (status.get("disruptionsAllowed", 0) == 0) == (min_available > 0)


def evictions_refused(kube: Api) -> int:
    """How many evictions the API server has refused with 429 (a budget said no) since it started."""
    return sum(int(count) for labels, count in REQUESTS.findall(kube.text("/metrics"))
               if 'subresource="eviction"' in labels and 'code="429"' in labels)


def planned_changes(preview_out: str) -> set[tuple[str, str]]:
    """(operation, resource name) of every step line of a plain `pulumi preview`."""
    return {(op, name) for name, op in STEP_LINE.findall(preview_out)}


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def timeline(output: str, node_roots: dict[str, Path], since: str) -> list[str]:
    """The drain's lines from `up`'s output and the host steps' lines from each node's run log from SINCE (UTC,
    `%Y-%m-%dT%H:%M:%SZ`) on, in time order."""
    events = []  # (time, order, node, step, text); the output's lines are in the order they happened
    for order, found in enumerate(dict.fromkeys(DRAIN_LINE.findall(output))):
        events.append((found[0], float(order), found[2], found[1], found[3]))
    for node, root in node_roots.items():
        log = root / "var/log/ascend-npu/run.log"
        for index, line in enumerate(log.read_text().splitlines() if log.exists() else []):
            found = HOST_LINE.match(line)
            if not (found and _milestone(found[3])):
                continue
            # Within one second (the logs' resolution): after the node's drain lines, before what follows them.
            drained = [e[1] for e in events if e[2] == node and e[3] == "drain" and e[0] <= found[1]]
            events.append((found[1], max(drained, default=-1.0) + 0.5 + index * 1e-6, node, found[2], found[3]))
    return [f"{at} {node:<11} {step:<9} {text}" for at, _, node, step, text in sorted(events) if at >= since]


def _milestone(text: str) -> bool:
    """The host lines worth a timeline: installs and the verdict, not every check."""
    return bool(re.search(r" installed|verified|failed", text))
