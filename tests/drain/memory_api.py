"""An in-memory API server for the drain's unit tests: Nodes, Pods, Events, JSON merge patch and evictions.

Simulated: the API server. An eviction is granted unless the Pod's budget still refuses (429, as the disruption
controller's budget does); a granted one marks the Pod deleting, with the eviction's grace period or the Pod's own,
and the Pod is gone once it has stopped (its STOPS_AFTER seconds, at most the grace period) on a clock that moves
only when the drain sleeps. How the real server answers is tested end to end (tests/e2e/test_upgrade_drain.py).
"""
from __future__ import annotations

import copy
from typing import Callable, Optional

from components.kubeapi.client import ApiError

BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."


def merge(target: dict, patch: dict) -> dict:
    """RFC 7386 JSON merge patch."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            target[key] = merge(target.get(key) if isinstance(target.get(key), dict) else {}, value)
        else:
            target[key] = value
    return target


class MemoryApi:
    """The store; REFUSALS[pod] is how many more evictions of it the budget refuses; ON_PATCH runs after a patch."""

    def __init__(self, nodes: list[dict], pods: list[dict], refusals: Optional[dict[str, int]] = None):
        self.nodes = {n["metadata"]["name"]: n for n in copy.deepcopy(nodes)}
        self.pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in copy.deepcopy(pods)}
        self.refusals = dict(refusals or {})
        self.evictions: list[dict] = []
        self.events: list[dict] = []
        self.now = 0.0
        self.on_patch: Optional[Callable[["MemoryApi"], None]] = None

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def find(self, path: str):
        self._reap()
        parts = path.strip("/").split("/")
        if parts[2] == "nodes":
            return copy.deepcopy(self.nodes.get(parts[3]))
        return copy.deepcopy(self.pods.get((parts[3], parts[5])))

    def items(self, path: str, **query):
        self._reap()
        node = query["fieldSelector"].split("=", 1)[1]
        key, _, value = query.get("labelSelector", "").partition("=")
        return [copy.deepcopy(p) for p in self.pods.values() if p["spec"].get("nodeName") == node
                and (not key or p["metadata"].get("labels", {}).get(key) == value)]

    def merge_patch(self, path: str, body: dict):
        merge(self.nodes[path.split("?", 1)[0].rsplit("/", 1)[1]], copy.deepcopy(body))
        if self.on_patch:
            self.on_patch(self)

    def post(self, path: str, body: dict):
        if path.endswith("/events"):
            self.events.append(copy.deepcopy(body))
            return
        meta = body["metadata"]
        pod = self.pods.get((meta["namespace"], meta["name"]))
        if pod is None:
            raise ApiError(404, f'pods "{meta["name"]}" not found', "NotFound")
        name = f"{meta['namespace']}/{meta['name']}"
        if self.refusals.get(name, 0) > 0:
            self.refusals[name] -= 1
            raise ApiError(429, BUDGET, "TooManyRequests")
        self.evictions.append(copy.deepcopy(body))
        grace = (body.get("deleteOptions") or {}).get("gracePeriodSeconds")
        own = pod["spec"].get("terminationGracePeriodSeconds", 30)
        pod["metadata"].setdefault("deletionTimestamp", f"t={self.now:.0f}")
        pod["metadata"]["deletionGracePeriodSeconds"] = own if grace is None else grace
        pod["metadata"]["_deleted_at"] = self.now

    def evicted(self) -> list[str]:
        return [f"{e['metadata']['namespace']}/{e['metadata']['name']}" for e in self.evictions]

    def _reap(self) -> None:
        """Pods whose containers stopped (or whose grace period ran out) are gone."""
        for key, pod in list(self.pods.items()):
            meta = pod["metadata"]
            if "_deleted_at" in meta:
                stops = min(pod.get("stops_after", 0), meta["deletionGracePeriodSeconds"])
                if self.now >= meta["_deleted_at"] + stops:
                    del self.pods[key]


def node(name: str = "npu-01", unschedulable: bool = False) -> dict:
    return {"metadata": {"name": name, "uid": f"uid-{name}", "labels": {"ascend-npu.io/ready": "true"},
                         "annotations": {}}, "spec": {"unschedulable": True} if unschedulable else {}}


def pod(name: str, npu: bool = True, labels: Optional[dict] = None, owner: Optional[str] = "StatefulSet",
        empty_dir: bool = False, stops_after: float = 0, grace: Optional[int] = None) -> dict:
    """A Running Pod on npu-01; OWNER is its controller's kind (None: a bare Pod)."""
    limits = {"huawei.com/Ascend910": "1"} if npu else {"cpu": "1"}
    meta = {"name": name, "namespace": "team-a", "uid": name, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "x", "uid": "u",
                                    "controller": True}]
    spec: dict = {"nodeName": "npu-01", "containers": [{"name": "c", "resources": {"limits": limits}}]}
    if empty_dir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running"}, "stops_after": stops_after}
