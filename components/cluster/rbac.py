"""ServiceAccounts and the least privilege each node agent needs.

Only the device plugin talks to the API server. Its ClusterRole holds what the MindCluster manifest grants
on cluster-scoped objects and on pods of any namespace (it annotates the pods it allocates NPUs to).
ConfigMaps are not granted cluster-wide: the plugin writes its `mindx-dl-deviceinfo-<node>` ConfigMaps in
`kube-system` only, so a Role there holds them. Hot reset (`-hotReset`, which reads `reset-config-*`
ConfigMaps in job namespaces) is not enabled, so nothing else needs ConfigMaps.
"""
from __future__ import annotations

from copy import deepcopy
from typing import Any

from components.cluster.labels import image_version, metadata

DEVICE_PLUGIN_SA = "ascend-device-plugin"
EXPORTER_SA = "npu-exporter"
VALIDATION_SA = "ascend-npu-validation"
DEVICE_PLUGIN_ROLE = "ascend-npu-device-plugin"
DEVICE_INFO_NAMESPACE = "kube-system"

DEVICE_PLUGIN_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "watch", "patch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
]
DEVICE_INFO_RULES = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update", "list", "watch"]},
]


def _service_account(values: dict[str, Any], name: str, component: str, version: str,
                     token: bool) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": metadata(values, name, component, name, version, values["namespace"]),
            "automountServiceAccountToken": token}


def build_service_accounts(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One ServiceAccount per component; only the device plugin's mounts a token."""
    accounts = [_service_account(values, DEVICE_PLUGIN_SA, "device-plugin",
                                 image_version(values["devicePlugin"]["image"]), token=True)]
    if values["exporter"]["enabled"]:
        accounts.append(_service_account(values, EXPORTER_SA, "exporter",
                                         image_version(values["exporter"]["image"]), token=False))
    if values["validation"]["enabled"]:
        accounts.append(_service_account(values, VALIDATION_SA, "validation", values["versions"]["cann"],
                                         token=False))
    return accounts


def _binding(kind: str, meta: dict[str, Any], role_kind: str, role: str, values: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": DEVICE_PLUGIN_SA, "namespace": values["namespace"]}]}


def build_device_plugin_rbac(values: dict[str, Any]) -> list[dict[str, Any]]:
    """ClusterRole and binding for pods and nodes; Role and binding for ConfigMaps in `kube-system`."""
    version = image_version(values["devicePlugin"]["image"])

    def meta(namespace: str | None = None) -> dict[str, Any]:
        return metadata(values, DEVICE_PLUGIN_ROLE, "device-plugin", DEVICE_PLUGIN_SA, version, namespace)

    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(),
         "rules": deepcopy(DEVICE_PLUGIN_RULES)},
        _binding("ClusterRoleBinding", meta(), "ClusterRole", DEVICE_PLUGIN_ROLE, values),
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(DEVICE_INFO_NAMESPACE),
         "rules": deepcopy(DEVICE_INFO_RULES)},
        _binding("RoleBinding", meta(DEVICE_INFO_NAMESPACE), "Role", DEVICE_PLUGIN_ROLE, values),
    ]
