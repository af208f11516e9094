"""What config problems say: group reasons, image strings as mappings, ServiceAccounts, pool typos, node names."""
from __future__ import annotations

import pytest

from components.config.checks import run_checks
from components.config.dashboard import SYSTEM_GROUPS, group_problem, service_account_problem
from components.config.images import split_reference
from components.config.problems import Problem, node_names, with_node_names
from components.config.stack import parse_sections
from tests.stacks import load_stack

DIGEST = "sha256:" + "4e" * 32


def test_each_refused_group_has_its_own_reason():
    groups = [*SYSTEM_GROUPS, "system:serviceaccounts:kube-system", "system:bootstrappers:kubeadm:default-node-token",
              "system:kube-proxy", " "]
    messages = [group_problem(g) for g in groups]
    assert all(messages) and len(set(messages)) == len(messages)
    assert "bypass RBAC entirely" in group_problem("system:masters")
    assert "anonymous" not in group_problem("system:masters")
    assert "not a group" in group_problem("system:anonymous")
    assert group_problem("npu-operators") is None


@pytest.mark.parametrize("written, says", [
    ("kubernetes-dashboard/kubernetes-dashboard",
     "write serviceAccount: kubernetes-dashboard (dashboardNamespace is kubernetes-dashboard by default)"),
    ("monitoring:dashboard-reader", "write serviceAccount: dashboard-reader and dashboardNamespace: monitoring"),
    ("system:serviceaccount:ops:reader", "written as system:serviceaccount:<namespace>:<name>"),
    ("Dashboard", "is not a ServiceAccount name; write the name alone"),
    ("kubernetes-dashboard", None),
])
def test_service_account_is_the_name_alone(written, says):
    problem = service_account_problem(written)
    assert problem == says if says is None else says in problem


@pytest.mark.parametrize("text, parts", [
    ("ascendhub.huawei.com/public-ascendhub/ascend-k8sdeviceplugin:v6.0.0",
     ("ascendhub.huawei.com/public-ascendhub/ascend-k8sdeviceplugin", "v6.0.0", None)),
    ("registry.example:5000/ascend/cann", ("registry.example:5000/ascend/cann", None, None)),
    (f"registry.example:5000/ascend/cann:8.0.0@{DIGEST}", ("registry.example:5000/ascend/cann", "8.0.0", DIGEST)),
    (f"registry.example/ascend/npu-exporter@{DIGEST}", ("registry.example/ascend/npu-exporter", None, DIGEST)),
    ("registry.example/ascend/cann@sha256:beef", None),
    ("Registry.Example/Ascend:v1", None),
    ("ghp_0123456789abcdefghijABCDEFGHIJ0123", None),
])
def test_an_image_string_splits_at_the_last_colon_after_the_last_slash(text, parts):
    found = split_reference(text)
    assert (found if found is None else (found["repository"], found["tag"], found["digest"])) == parts


def test_an_image_string_in_a_secret_section_is_not_shown_in_the_hint():
    raw = {"devicePlugin": {"image": "registry.example/ascend/ascend-k8sdeviceplugin:v6.0.0"}}
    _, problems = parse_sections(raw, secret_sections={"devicePlugin"})
    [problem] = [p for p in problems if p.field == "devicePlugin.image"]
    assert "registry.example" not in problem.message and "{repository: <registry and path>" in problem.message


def test_node_problems_name_the_node_but_never_a_secret_or_an_invalid_name():
    nodes = [{"name": "infer-01.example"}, {"name": "AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eAN"}, {"name": "Upper"}, "x"]
    assert node_names(nodes) == {0: "infer-01.example"}
    [named] = with_node_names([Problem("nodes[0].address", "'10.0.0.1' is also nodes[0].address")], nodes)
    assert str(named) == "ascend-npu:nodes[0] (infer-01.example).address: '10.0.0.1' is also " \
                         "nodes[0] (infer-01.example).address"
    assert named.field == "nodes[0].address"


def test_a_pool_typo_is_the_one_problem_of_its_node():
    config = {k.split(":", 1)[1]: v for k, v in load_stack("prod")["config"].items()}
    config["nodes"][24]["pool"] = "infr"
    parsed, problems = parse_sections(config)
    problems += run_checks(parsed, has_key=True, key_is_secret=True)
    assert [p.field for p in problems if p.field.startswith("nodes")] == ["nodes[24].pool"]
