"""A made-up third node agent, as its package would build it: ServiceAccount, ClusterRole, a DaemonSet per chip."""
from __future__ import annotations

from typing import Any

from components.cluster.common.metadata import metadata
from components.cluster.common.node_labels import CHIP
from components.cluster.common.pod_parts import (
    daemonset,
    node_selector,
    requests_equal_limits,
    service_account,
    tolerations,
)

APP = "example-agent"
RBAC_API = "rbac.authorization.k8s.io/v1"


def _meta(values: dict[str, Any], name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    namespace = values["namespace"] if labels else None
    return metadata(values, name, APP, APP, values["versions"]["driver"], namespace, labels)


def build_example_service_account(values: dict[str, Any]) -> dict[str, Any]:
    return service_account(values, APP, APP, values["versions"]["driver"], token=True)


def build_example_rbac(values: dict[str, Any]) -> list[dict[str, Any]]:
    role = {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": _meta(values, APP),
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]}
    binding = {"apiVersion": RBAC_API, "kind": "ClusterRoleBinding", "metadata": _meta(values, APP),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": APP},
               "subjects": [{"kind": "ServiceAccount", "name": APP, "namespace": values["namespace"]}]}
    return [role, binding]


def build_example_daemonsets(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One DaemonSet per chip, at the node agents' priority."""
    result = []
    for chip in values["devicePlugin"]["chips"]:
        pod = {"serviceAccountName": APP, "priorityClassName": values["priorityClass"]["name"],
               "nodeSelector": node_selector(values, {CHIP: chip}), "tolerations": tolerations(values),
               "containers": [{"name": APP, "image": "registry.example.com/example-agent:1.0",
                               "resources": requests_equal_limits({"cpu": "50m", "memory": "64Mi"}),
                               "securityContext": {"readOnlyRootFilesystem": True}}]}
        result.append(daemonset(_meta(values, f"{APP}-{chip.lower()}", {CHIP: chip}), APP, pod))
    return result
