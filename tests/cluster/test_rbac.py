"""Least privilege: no wildcard, no cluster-admin, the device plugin's rules and nothing more."""
from __future__ import annotations

import pytest

from components.cluster.device_plugin.rbac import DEVICE_PLUGIN_SA
from components.cluster.exporter.daemonsets import EXPORTER_SA
from components.cluster.validation.job import VALIDATION_SA

from .stacks import VARIANTS, of_kind, one, pod_spec

ROLE_KINDS = ("Role", "ClusterRole")
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
# github.com/Ascend/mind-cluster v6.0.0 component/ascend-device-plugin/build/ascendplugin-910.yaml, less ConfigMaps
# (split below).
PLUGIN_CLUSTER_GRANTS = {("pods", v) for v in ("get", "list", "update", "watch", "patch")} | {
    ("nodes", "get"), ("nodes", "patch"), ("nodes/status", "get"), ("nodes/status", "patch"),
    ("nodes/status", "update"), ("events", "create")}
# Written in kube-system only; listed and watched cluster-wide by the 910/910B informer.
CONFIGMAP_WRITES = {("configmaps", v) for v in ("get", "create", "update")}
CONFIGMAP_WATCH = {("configmaps", "list"), ("configmaps", "watch")}


def grants(role: dict) -> set[tuple[str, str]]:
    return {(resource, verb) for rule in role["rules"] for resource in rule["resources"] for verb in rule["verbs"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_wildcards_and_no_admin_roles(objects, variant):
    for role in [o for o in objects[variant] if o["kind"] in ROLE_KINDS]:
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(field, []), f"{role['metadata']['name']}: wildcard in {field}"
            assert "nonResourceURLs" not in rule and "resourceNames" not in rule
            assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])
    for binding in [o for o in objects[variant] if o["kind"] in BINDING_KINDS]:
        assert binding["roleRef"]["name"] not in ("cluster-admin", "admin", "edit")
        built = {(o["kind"], o["metadata"]["name"]) for o in objects[variant] if o["kind"] in ROLE_KINDS}
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in built, "binds a role it does not ship"


def test_device_plugin_cluster_role_is_the_manifest_minus_configmaps(objects):
    cluster_role = one(objects["prod-v6"], "ClusterRole", "ascend-npu-device-plugin")
    assert grants(cluster_role) == PLUGIN_CLUSTER_GRANTS
    assert all(rule["apiGroups"] == [""] for rule in cluster_role["rules"])


def bound_cluster_grants(objs: list[dict]) -> set[tuple[str, str]]:
    """Everything the plugin's ServiceAccount may do in every namespace, through its ClusterRoleBindings."""
    roles = {r["metadata"]["name"]: r for r in of_kind(objs, "ClusterRole")}
    return set().union(*(grants(roles[b["roleRef"]["name"]]) for b in of_kind(objs, "ClusterRoleBinding")
                         if b["subjects"][0]["name"] == DEVICE_PLUGIN_SA))


def test_910b_plugin_may_list_and_watch_configmaps_in_every_namespace(objects):
    """Its reset-ConfigMap informer spans all namespaces and blocks until synced (pkg/device/ascendtolerance.go)."""
    for variant in ("dev", "prod", "dev-plugin-v26"):
        assert CONFIGMAP_WATCH <= bound_cluster_grants(objects[variant]), variant
    assert not ({("configmaps", v) for v in ("get", "create", "update")} & bound_cluster_grants(objects["prod"]))


def test_310p_only_cluster_gets_no_cluster_wide_configmaps(values):
    from components.cluster.device_plugin.rbac import build_device_plugin_rbac

    only_310p = {**values["prod"], "devicePlugin": {**values["prod"]["devicePlugin"], "chips": ["310P"]}}
    assert not CONFIGMAP_WATCH & bound_cluster_grants(build_device_plugin_rbac(only_310p))


def test_v26_plugin_reads_pods_through_the_kubelet(objects):
    assert ("nodes/proxy", "get") in bound_cluster_grants(objects["dev-plugin-v26"])
    assert ("nodes/proxy", "get") not in bound_cluster_grants(objects["dev"])


def test_configmaps_written_only_in_kube_system_for_the_plugin(objects):
    role = one(objects["prod"], "Role", "ascend-npu-device-plugin")
    assert role["metadata"]["namespace"] == "kube-system"
    assert grants(role) == CONFIGMAP_WRITES
    binding = next(o for o in of_kind(objects["prod"], "RoleBinding")
                   if o["roleRef"]["name"] == "ascend-npu-device-plugin")
    assert binding["metadata"]["namespace"] == "kube-system"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": DEVICE_PLUGIN_SA, "namespace": "ascend-system"}]


def test_only_the_device_plugin_is_bound_cluster_wide(objects):
    for variant, objs in objects.items():
        bindings = of_kind(objs, "ClusterRoleBinding")
        assert bindings and all(b["subjects"] == [{"kind": "ServiceAccount", "name": DEVICE_PLUGIN_SA,
                                                   "namespace": "ascend-system"}] for b in bindings), variant


def test_only_the_device_plugin_mounts_a_token(objects):
    objs = objects["prod"]
    accounts = {sa["metadata"]["name"]: sa["automountServiceAccountToken"] for sa in of_kind(objs, "ServiceAccount")}
    assert {DEVICE_PLUGIN_SA, EXPORTER_SA, VALIDATION_SA} <= set(accounts)
    assert [name for name, token in accounts.items() if token] == [DEVICE_PLUGIN_SA]
    for workload in of_kind(objs, "DaemonSet") + of_kind(objs, "Job"):
        spec = pod_spec(workload)
        assert spec["serviceAccountName"] in accounts
        assert spec["automountServiceAccountToken"] is (spec["serviceAccountName"] == DEVICE_PLUGIN_SA)


def test_each_component_has_its_own_service_account(objects):
    for objs in objects.values():
        owners = [sa["metadata"]["labels"]["app.kubernetes.io/component"] for sa in of_kind(objs, "ServiceAccount")]
        assert len(owners) == len(set(owners))
    names = {o["metadata"]["name"] for o in of_kind(objects["prod-exporter-off"], "ServiceAccount")}
    assert {DEVICE_PLUGIN_SA, VALIDATION_SA} <= names and EXPORTER_SA not in names
    names = {o["metadata"]["name"] for o in of_kind(objects["prod-volcano-digest"], "ServiceAccount")}
    assert {DEVICE_PLUGIN_SA, EXPORTER_SA} <= names and VALIDATION_SA not in names
