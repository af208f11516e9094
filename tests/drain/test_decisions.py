"""When the drain steps cordon, evict and uncordon, and what they leave on the Node.

Simulated: the API server, as an in-memory store of Nodes and Pods with JSON merge patch and evictions that are
always granted. How the real one answers evictions (PodDisruptionBudgets, 429) is tested end to end
(tests/e2e/test_3_day2.py) against kube-apiserver and its disruption controller.
"""
from __future__ import annotations

import argparse
import copy
import json

import pytest

from components.drain import node_state as state
from components.drain.__main__ import after_host, before_host, leave

REASON, OLD_REASON = "driver 24.1.rc2, firmware 7.3.0.1.231", "driver 24.1.rc1, firmware 7.1.0.6.220"


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
    def __init__(self, nodes: list[dict], pods: list[dict]):
        self.nodes = {n["metadata"]["name"]: n for n in copy.deepcopy(nodes)}
        self.pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in copy.deepcopy(pods)}
        self.evicted: list[str] = []

    def find(self, path: str):
        parts = path.strip("/").split("/")
        if parts[2] == "nodes":
            return copy.deepcopy(self.nodes.get(parts[3]))
        return copy.deepcopy(self.pods.get((parts[3], parts[5])))

    def items(self, path: str, **query):
        node = query["fieldSelector"].split("=", 1)[1]
        key, _, value = query.get("labelSelector", "").partition("=")
        return [copy.deepcopy(p) for p in self.pods.values() if p["spec"].get("nodeName") == node
                and (not key or p["metadata"].get("labels", {}).get(key) == value)]

    def merge_patch(self, path: str, body: dict):
        merge(self.nodes[path.rsplit("/", 1)[1]], copy.deepcopy(body))

    def post(self, path: str, body: dict):
        meta = body["metadata"]
        self.evicted.append(f"{meta['namespace']}/{meta['name']}")
        del self.pods[(meta["namespace"], meta["name"])]


def node(name: str = "npu-01", unschedulable: bool = False) -> dict:
    return {"metadata": {"name": name, "labels": {"ascend-npu.io/ready": "true"}, "annotations": {}},
            "spec": {"unschedulable": True} if unschedulable else {}}


def pod(name: str, npu: bool = True, labels: dict | None = None, owner: str | None = None) -> dict:
    limits = {"huawei.com/Ascend910": "1"} if npu else {"cpu": "1"}
    meta = {"name": name, "namespace": "team-a", "uid": name, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "uid": "u"}]
    return {"metadata": meta, "spec": {"nodeName": "npu-01", "containers": [{"name": "c", "resources": {
        "limits": limits}}]}, "status": {"phase": "Running"}}


def args(selector: str = "") -> argparse.Namespace:
    return argparse.Namespace(node="npu-01", timeout=30, selector=selector)


@pytest.fixture
def previous(monkeypatch):
    def set_reason(reason: str | None):
        text = "" if reason is None else "...\n" + json.dumps({"node": "npu-01", "for": reason, "drained": False})
        monkeypatch.setenv("PULUMI_COMMAND_STDOUT", text)
    return set_reason


def test_a_node_not_in_the_cluster_is_installed_without_a_drain(previous, capsys):
    previous(None)
    assert before_host(MemoryApi([], []), args(), REASON) == {"drained": False}
    assert "not in the cluster yet: its host steps run without a drain" in capsys.readouterr().out


def test_a_first_install_without_npu_pods_and_an_unchanged_reason_drain_nothing(previous):
    api = MemoryApi([node()], [pod("web", npu=False)])
    previous(None)
    assert before_host(api, args(), REASON) == {"drained": False}
    previous(REASON)  # a renamed node, a new timeout: the reason is the same
    api.pods[("team-a", "train")] = pod("train")
    assert before_host(api, args(), REASON) == {"drained": False}
    assert not api.nodes["npu-01"]["spec"] and api.evicted == []


def test_a_new_driver_cordons_evicts_npu_and_selected_pods_only_then_uncordons(previous):
    api = MemoryApi([node()], [pod("train"), pod("web", npu=False), pod("infer", npu=False, labels={"app": "infer"}),
                               pod("plugin", owner="DaemonSet")])
    previous(OLD_REASON)
    assert before_host(api, args("app=infer"), REASON) == {"drained": True, "evicted": ["team-a/infer",
                                                                                        "team-a/train"]}
    drained = api.nodes["npu-01"]
    assert drained["spec"]["unschedulable"] and drained["metadata"]["labels"][state.STATE] == state.UPGRADING
    assert drained["metadata"]["annotations"][state.CORDONED_BY] == state.OWNER
    assert sorted(name for _, name in api.pods) == ["plugin", "web"]
    assert after_host(api, args(), REASON) == {"uncordoned": True}
    done = api.nodes["npu-01"]
    assert "unschedulable" not in done["spec"] and state.CORDONED_BY not in done["metadata"]["annotations"]
    assert done["metadata"]["labels"][state.STATE] == state.DONE


def test_a_node_someone_else_cordoned_stays_cordoned(previous):
    api = MemoryApi([node(unschedulable=True)], [pod("train")])
    previous(OLD_REASON)
    before_host(api, args(), REASON)
    assert after_host(api, args(), REASON) == {"uncordoned": False}
    assert api.nodes["npu-01"]["spec"]["unschedulable"]


def test_leaving_evicts_removes_the_drain_label_and_undoes_its_own_cordon(previous):
    api = MemoryApi([node()], [pod("train")])
    api.nodes["npu-01"]["metadata"]["labels"][state.STATE] = state.DONE
    assert leave(api, args(), REASON) == {"drained": True, "evicted": ["team-a/train"]}
    left = api.nodes["npu-01"]
    assert state.STATE not in left["metadata"]["labels"] and "unschedulable" not in left["spec"]
