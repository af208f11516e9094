"""The device plugin's ServiceAccount and the least privilege its pinned release needs.

Only the device plugin talks to the API server. Its rules come from the release catalog entry of the pinned
image (components/releases/device-plugin.yaml), in three parts:
- one ClusterRole for what every chip needs: pods of any namespace (it annotates the pods it gives NPUs to),
  its node and node status, events (v26.1.0 adds nodes/proxy get: it reads pods from the kubelet);
- one ClusterRole per chip that needs more, bound only where that chip runs: on 910 and 910B every
  catalogued release starts a ConfigMap informer over ALL namespaces (label reset=true) and waits for it to
  sync with no timeout, so it needs configmaps list/watch cluster-wide, while a 310P-only cluster never
  grants them;
- a Role in `kube-system` with configmaps get/create/update only: the plugin writes its
  `mindx-dl-deviceinfo-<node>` ConfigMap there and nowhere else, so the write verbs stay namespaced.
  list/watch there would be redundant with the per-chip grant, and no release lists ConfigMaps otherwise.
"""
from __future__ import annotations

from typing import Any

from components.cluster.common.metadata import image_version, metadata
from components.cluster.common.pod_parts import service_account
from components.releases.catalog import release_entry
from components.releases.entries import Rule

DEVICE_PLUGIN_SA = "ascend-device-plugin"
DEVICE_PLUGIN_ROLE = "ascend-npu-device-plugin"


def build_device_plugin_service_account(values: dict[str, Any]) -> dict[str, Any]:
    """The plugin's ServiceAccount, the only one of the project that mounts a token."""
    return service_account(values, DEVICE_PLUGIN_SA, "device-plugin", image_version(values["devicePlugin"]["image"]),
                           token=True)


def _binding(kind: str, meta: dict[str, Any], role_kind: str, role: str, values: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": DEVICE_PLUGIN_SA, "namespace": values["namespace"]}]}


def _role(kind: str, meta: dict[str, Any], rules: list[Rule]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": [rule.manifest() for rule in rules]}


def chip_role_name(chip: str) -> str:
    """`ascend-npu-device-plugin-910b`: the extra cluster-wide rules of one chip type."""
    return f"{DEVICE_PLUGIN_ROLE}-{chip.lower()}"


def build_device_plugin_rbac(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The release's cluster-wide rules, the extra rules of each chip present, its device-info Role."""
    plugin = values["devicePlugin"]
    version = image_version(plugin["image"])
    rbac = release_entry("device-plugin", plugin["release"]).rbac

    def meta(name: str, namespace: str | None = None) -> dict[str, Any]:
        return metadata(values, name, "device-plugin", DEVICE_PLUGIN_SA, version, namespace)

    objects = [_role("ClusterRole", meta(DEVICE_PLUGIN_ROLE), rbac.cluster),
               _binding("ClusterRoleBinding", meta(DEVICE_PLUGIN_ROLE), "ClusterRole", DEVICE_PLUGIN_ROLE, values)]
    for chip in plugin["chips"]:
        if rbac.chips.get(chip):
            name = chip_role_name(chip)
            objects += [_role("ClusterRole", meta(name), rbac.chips[chip]),
                        _binding("ClusterRoleBinding", meta(name), "ClusterRole", name, values)]
    namespace = rbac.device_info_namespace
    return objects + [
        _role("Role", meta(DEVICE_PLUGIN_ROLE, namespace), rbac.device_info),
        _binding("RoleBinding", meta(DEVICE_PLUGIN_ROLE, namespace), "Role", DEVICE_PLUGIN_ROLE, values),
    ]
