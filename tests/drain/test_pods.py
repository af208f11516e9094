"""Which Pods a drain evicts: NPU Pods and the selector's, never a DaemonSet's, a static Pod or a finished one."""
from __future__ import annotations

from components.drain.pods import left_alone, npu_requests


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


def test_daemonset_static_finished_and_terminating_pods_are_left_alone():
    assert "DaemonSet" in left_alone(pod("plugin", {"huawei.com/Ascend910": "1"}, owner="DaemonSet"))
    assert "static" in left_alone(pod("etcd", annotations={"kubernetes.io/config.mirror": "abc"}))
    assert left_alone(pod("done", {"huawei.com/Ascend910": "1"}, phase="Succeeded")) == "finished"
    terminating = pod("t", {"huawei.com/Ascend910": "1"})
    terminating["metadata"]["deletionTimestamp"] = "2026-12-02T05:00:00Z"
    assert left_alone(terminating) == "already being deleted"
    assert left_alone(pod("job", {"huawei.com/Ascend910": "1"}, owner="Job")) is None
    assert left_alone(pod("rs", {"huawei.com/Ascend910": "1"}, owner="ReplicaSet")) is None
