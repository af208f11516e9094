"""Dashboard access: read-only, namespaced, bound to the named subject; never a public Service."""
from __future__ import annotations

import pytest

from .stacks import VARIANTS, of_kind, one

READ = {"get", "list", "watch"}


def test_read_only_role_in_the_agents_namespace(objects):
    role = one(objects["prod"], "Role", "ascend-npu-dashboard-read")
    assert role["metadata"]["namespace"] == "ascend-system"
    assert all(set(rule["verbs"]) <= READ for rule in role["rules"])
    resources = {(group, r) for rule in role["rules"] for group in rule["apiGroups"] for r in rule["resources"]}
    assert {("", "pods"), ("", "pods/log"), ("apps", "daemonsets"), ("batch", "jobs"), ("", "services"),
            ("", "configmaps"), ("", "events")} <= resources
    assert not {r for _, r in resources} & {"secrets", "pods/exec", "pods/attach", "pods/portforward"}


def test_bound_to_the_group(objects):
    binding = one(objects["prod"], "RoleBinding", "ascend-npu-dashboard-read")
    assert binding["metadata"]["namespace"] == "ascend-system"
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "ascend-npu-dashboard-read"}
    assert binding["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                                    "name": "ascend-operators"}]


def test_bound_to_the_dashboard_service_account(objects):
    binding = one(objects["dev-dashboard-sa"], "RoleBinding", "ascend-npu-dashboard-read")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubernetes-dashboard",
                                    "namespace": "kubernetes-dashboard"}]


def test_absent_unless_enabled(objects):
    assert not [o for o in objects["dev"] if o["metadata"]["name"] == "ascend-npu-dashboard-read"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_service_is_reachable_from_outside(objects, variant):
    for service in of_kind(objects[variant], "Service"):
        assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
        assert "externalIPs" not in service["spec"]
    assert not of_kind(objects[variant], "Ingress")
