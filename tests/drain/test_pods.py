"""Which Pods a drain evicts: NPU Pods and the selector's, never a DaemonSet's, a static Pod or a finished one; bare
and emptyDir Pods only when opted in, terminating ones awaited (kubectl v0.36.3 pkg/drain/filters.go)."""
from __future__ import annotations

import pytest

from components.drain.pods import BARE, LOCAL_DATA, left_alone, npu_requests, select


def pod(name: str, limits: dict | None = None, owner: str | None = None, phase: str = "Running",
        annotations: dict | None = None, init: dict | None = None) -> dict:
    containers = [{"name": "main", "image": "registry.example/app:1", "resources": {"limits": limits or {}}}]
    spec = {"nodeName": "npu-01", "containers": containers}
    if init:
        spec["initContainers"] = [{"name": "warm", "image": "registry.example/app:1",
                                   "resources": {"requests": init}}]
    meta = {"name": name, "namespace": "team-a", "uid": f"uid-{name}", "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "x", "uid": "u",
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def test_every_ascend_resource_counts_as_npu_including_slices_and_init_containers():
    assert npu_requests(pod("a", {"huawei.com/Ascend910": "2", "cpu": "4"})) == {"huawei.com/Ascend910": "2"}
    assert npu_requests(pod("b", {"huawei.com/Ascend910-2c": 1})) == {"huawei.com/Ascend910-2c": "1"}
    assert npu_requests(pod("c", init={"huawei.com/Ascend310P": "1"})) == {"huawei.com/Ascend310P": "1"}
    assert npu_requests(pod("d", {"nvidia.com/gpu": "1", "cpu": "1"})) == {}


def test_daemonset_static_and_finished_pods_are_left_alone():
    assert "DaemonSet" in left_alone(pod("plugin", {"huawei.com/Ascend910": "1"}, owner="DaemonSet"))
    assert "static" in left_alone(pod("etcd", annotations={"kubernetes.io/config.mirror": "abc"}))
    assert left_alone(pod("done", {"huawei.com/Ascend910": "1"}, phase="Succeeded")).startswith("finished")
    assert left_alone(pod("job", {"huawei.com/Ascend910": "1"}, owner="Job")) is None
    assert left_alone(pod("rs", {"huawei.com/Ascend910": "1"}, owner="ReplicaSet")) is None
    not_controller = pod("x", {"huawei.com/Ascend910": "1"}, owner="DaemonSet")
    not_controller["metadata"]["ownerReferences"][0]["controller"] = False  # an owner, not the controller
    assert left_alone(not_controller) is None


def with_volume(p: dict) -> dict:
    p["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {"medium": "Memory"}}, {"name": "cfg", "configMap": {}}]
    return p


def deleting(p: dict) -> dict:
    p["metadata"]["deletionTimestamp"] = "2026-12-02T05:00:00Z"
    return p


@pytest.mark.parametrize("the_pod, force, local, outcome", [
    (pod("rs", owner="ReplicaSet"), False, False, "evict"),
    (pod("bare"), False, False, [BARE]),
    (pod("bare"), True, False, "evict"),
    (with_volume(pod("sts", owner="StatefulSet")), False, False, [LOCAL_DATA]),
    (with_volume(pod("sts", owner="StatefulSet")), False, True, "evict"),
    (with_volume(pod("bare")), False, False, [LOCAL_DATA, BARE]),  # both named at once, as kubectl does
    (with_volume(pod("bare")), True, True, "evict"),
    (deleting(pod("bare")), False, False, "await"),  # already going: waited for, never evicted again
])
def test_the_opt_ins_and_the_terminating(the_pod, force, local, outcome):
    chosen = select([the_pod], force, local)
    found = "evict" if chosen.evict else "await" if chosen.awaited else sorted(chosen.refused)
    assert found == (sorted(outcome) if isinstance(outcome, list) else outcome)
    for names in chosen.refused.values():
        assert names == [f"team-a/{the_pod['metadata']['name']}"]
