"""The values contract: plain JSON, the only input of the builders, and labels on every object."""
from __future__ import annotations

import copy
import json

import pytest

from components.cluster.all_objects import cluster_objects

from .stacks import VARIANTS, pod_spec

RECOMMENDED = {"app.kubernetes.io/name", "app.kubernetes.io/component", "app.kubernetes.io/part-of",
               "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}
CLUSTER_SCOPED = {"Namespace", "PriorityClass", "RuntimeClass", "ClusterRole", "ClusterRoleBinding"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_values_are_plain_json_and_enough_to_build_everything(values, objects, variant):
    text = json.dumps(values[variant])
    assert cluster_objects(json.loads(text)) == objects[variant]


def test_values_of_the_prod_stack(values):
    prod = values["prod"]
    assert prod["devicePlugin"]["chips"] == ["910B", "310P"]
    assert prod["exporter"]["containerRuntimes"] == ["containerd", "docker"]
    jobs = prod["validation"]["jobs"]
    assert {chip: job["node"] for chip, job in jobs.items()} == {
        "910": "", "910B": "train-01.prod.corp.example", "910C": "", "310": "", "310P": "infer-01.prod.corp.example"}
    assert jobs["310"]["image"] == {"repository": "", "tag": None, "digest": None, "pullPolicy": "IfNotPresent",
                                    "registry": None}
    assert prod["runtimeClass"] == {"create": True, "name": "ascend", "handler": "ascend"}
    assert prod["devicePlugin"]["image"]["digest"].startswith("sha256:")
    assert values["dev-ascend-default"]["runtimeClass"]["create"] is False


def test_builders_read_the_namespace_from_values(values):
    moved = copy.deepcopy(values["prod"])
    moved["namespace"] = "npu-agents"
    objs = cluster_objects(moved)
    namespaces = {o["metadata"].get("namespace") for o in objs if o["kind"] not in CLUSTER_SCOPED}
    assert namespaces == {"npu-agents", "kube-system", "monitoring"}
    assert objs[0]["metadata"]["name"] == "npu-agents"
    bindings = [o for o in objs if o["kind"] in ("ClusterRoleBinding", "RoleBinding")
                and o["subjects"][0]["kind"] == "ServiceAccount"]
    assert all(b["subjects"][0]["namespace"] == "npu-agents" for b in bindings)


@pytest.mark.parametrize("variant", VARIANTS)
def test_recommended_labels_on_every_object_and_pod(objects, variant):
    for obj in objects[variant]:
        labels = obj["metadata"]["labels"]
        assert RECOMMENDED <= set(labels), f"{obj['kind']}/{obj['metadata']['name']}"
        assert labels["app.kubernetes.io/part-of"] == "ascend-npu"
        assert (obj["kind"] in CLUSTER_SCOPED) is ("namespace" not in obj["metadata"])
        if obj["kind"] in ("DaemonSet", "Job"):
            assert RECOMMENDED <= set(obj["spec"]["template"]["metadata"]["labels"])
            assert pod_spec(obj)["containers"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_names_are_unique_and_order_is_stable(values, objects, variant):
    keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects[variant]]
    assert len(keys) == len(set(keys))
    assert cluster_objects(values[variant]) == objects[variant]
    assert objects[variant][0]["kind"] == "Namespace"


def test_namespace_admits_privileged_agents_there_only(objects):
    labels = objects["prod"][0]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert labels["pod-security.kubernetes.io/warn"] == "baseline"
    assert labels["pod-security.kubernetes.io/audit"] == "baseline"
