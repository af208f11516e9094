"""Optional read-only Kubernetes Dashboard access to the agents' namespace; nothing cluster-wide."""
from __future__ import annotations

from copy import deepcopy
from typing import Any

from components.cluster.common.metadata import metadata
from components.cluster.common.template_functions import template_function

NAME = "ascend-npu-dashboard-read"
READ = ["get", "list", "watch"]
RULES = [
    {"apiGroups": [""], "resources": ["pods", "pods/log", "services", "configmaps", "events"], "verbs": READ},
    {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": READ},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": READ},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": READ},
]


@template_function("ascend-npu.dashboardSubjects")
def subjects(access: dict[str, Any]) -> list[dict[str, str]]:
    """The group and/or the Dashboard's ServiceAccount the values name."""
    result = []
    if access.get("group"):
        result.append({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": access["group"]})
    if access.get("serviceAccount"):
        result.append({"kind": "ServiceAccount", "name": access["serviceAccount"],
                       "namespace": access["dashboardNamespace"]})
    return result


def build_dashboard_access(values: dict[str, Any]) -> list[dict[str, Any]]:
    """A Role reading pods, logs, DaemonSets, Jobs, Services, ConfigMaps and events, and its RoleBinding."""
    def meta() -> dict[str, Any]:
        return metadata(values, NAME, "dashboard-access", NAME, values["versions"]["driver"], values["namespace"])

    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(),
         "rules": deepcopy(RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
         "subjects": subjects(values["dashboardAccess"])},
    ]
