"""The API side of the doctor on Node and Pod objects shaped as the API server returns them."""
from __future__ import annotations

from components.doctor.cluster_checks import pending_findings, tolerates


def node(name: str, allocatable: dict, taints: list | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"ascend-npu.io/ready": "true"}},
            "spec": {"taints": taints} if taints else {},
            "status": {"allocatable": {"cpu": "191", "memory": "1056347156Ki", "pods": "110", **allocatable}}}


def pending(name: str, resource: str, tolerations: list | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"containers": [{"name": "train", "image": "registry.example/train:1",
                                     "resources": {"limits": {resource: "1"}}}],
                     "tolerations": tolerations or []},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                           "reason": "Unschedulable"}]}}


TAINT = {"key": "huawei.com/Ascend910", "value": "true", "effect": "NoSchedule"}
NODES = [node("npu-01", {"huawei.com/Ascend910": "8"}, [TAINT]), node("infer-01", {"huawei.com/Ascend310P": "8"}),
         node("cpu-01", {})]


def test_a_resource_name_no_node_advertises_names_those_that_are():
    (found,) = pending_findings([pending("p", "huawei.com/Ascend910B")], NODES)
    assert found.id == "pending-resource-name"
    assert "advertised: huawei.com/Ascend310P, huawei.com/Ascend910" in found.what


def test_a_taint_without_toleration_is_named_and_a_matching_toleration_clears_it():
    (found,) = pending_findings([pending("p", "huawei.com/Ascend910")], NODES)
    assert "npu-01: huawei.com/Ascend910=true:NoSchedule" in found.what
    exists = [{"key": "huawei.com/Ascend910", "operator": "Exists", "effect": "NoSchedule"}]
    equal = [{"key": "huawei.com/Ascend910", "operator": "Equal", "value": "true"}]
    assert pending_findings([pending("p", "huawei.com/Ascend910", exists)], NODES) == []
    assert pending_findings([pending("p", "huawei.com/Ascend910", equal)], NODES) == []


def test_tolerations_follow_the_api_rules():
    assert tolerates([{"operator": "Exists"}], TAINT)  # empty key with Exists tolerates everything
    assert not tolerates([{"key": "huawei.com/Ascend910", "value": "false"}], TAINT)
    assert not tolerates([{"key": "huawei.com/Ascend910", "operator": "Exists", "effect": "NoExecute"}], TAINT)


def test_running_or_bound_pods_and_pods_without_npus_are_not_findings():
    bound = pending("b", "huawei.com/Ascend910B")
    bound["spec"]["nodeName"] = "npu-01"
    cpu = pending("c", "cpu")
    assert pending_findings([bound, cpu], NODES) == []
