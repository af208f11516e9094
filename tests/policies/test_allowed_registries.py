"""allowed-registries: what preview cannot know yet is left to the update, and the rest of the stack is still judged."""
from __future__ import annotations

import pytest

from tests.policies.test_stack_rules import stack_diagnostics

RULE = "allowed-registries"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown string during preview
UNKNOWN_ARRAY = "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2"
CLUSTER = {"type": "ascend-npu:index:AscendCluster", "name": "ascend-npu-cluster",
           "properties": {"images": {"registry": "registry.site.example:5000",
                                     "registries": ["registry.site.example:5000"]}}}


def pod(name: str, containers) -> dict:
    return {"type": "kubernetes:core/v1:Pod", "name": name,
            "properties": {"metadata": {"name": name, "namespace": "ml"}, "spec": {"containers": containers}}}


ELSEWHERE = {"name": "server", "image": "registry.other.example/ml/server:3.1.0"}


@pytest.mark.parametrize("first", [pod("computed", [{"name": "c", "image": UNKNOWN_STRING}, ELSEWHERE]),
                                   pod("computed", UNKNOWN_ARRAY)], ids=["image", "container-list"])
def test_an_image_unknown_in_preview_is_skipped_and_the_rest_is_judged(pack, first):
    found = stack_diagnostics(pack, RULE, [CLUSTER, first, pod("known", [ELSEWHERE])], {})
    messages = sorted(d.message for d in found)
    expected = 2 if isinstance(first["properties"]["spec"]["containers"], list) else 1
    assert len(messages) == expected and all(d.level == "mandatory" for d in found), messages
    assert all("registry.other.example/ml/server:3.1.0" in m for m in messages)
    assert not [m for m in messages if UNKNOWN_STRING in m or "can't be known" in m]


def test_without_an_ascend_cluster_nothing_is_reported(pack):
    assert stack_diagnostics(pack, RULE, [pod("known", [ELSEWHERE])], {}) == []


def test_the_message_names_the_workload_container_image_registry_and_allowed_ones(pack):
    [violation] = stack_diagnostics(pack, RULE, [CLUSTER, pod("known", [ELSEWHERE])], {})
    assert violation.message.splitlines()[-1].startswith(
        "Pod 'ml/known' containers[0] (server): image 'registry.other.example/ml/server:3.1.0' comes from "
        "registry.other.example, not a registry the stack allows (registry.site.example:5000); mirror it to the site "
        "registry registry.site.example:5000")
    assert violation.urn.endswith("::kubernetes:core/v1:Pod::known")
