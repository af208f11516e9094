"""Optional read-only Kubernetes Dashboard access: the group or ServiceAccount it is granted to."""
from __future__ import annotations

import re
from typing import Any, Optional

from pydantic import Field, field_validator, model_validator

from components.config.base import DNS_LABEL, DNS_SUBDOMAIN, SpecModel
from components.config.redact import looks_secret, preview

DEFAULT_DASHBOARD_NAMESPACE = "kubernetes-dashboard"
OWN_GROUP = "write a group of your own people who may read the NPU namespace, e.g. npu-operators"
# Why each group Kubernetes itself defines cannot be the subject of a read-only grant.
SYSTEM_GROUPS = {
    "system:masters": "the cluster-admin group: its members bypass RBAC entirely (the API server allows every request "
                      "of theirs before RBAC is consulted), so a read-only grant means nothing to them, and anyone put "
                      "in it to read the namespace could do anything in the cluster",
    "system:authenticated": "the group of every user and every ServiceAccount that logs in to the cluster",
    "system:unauthenticated": "the group of every anonymous request: anyone who can reach the API server, without a "
                              "login",
    "system:anonymous": "the user name of anonymous requests, not a group: as a group it names no one, and granting "
                        "anonymous requests anything opens the namespace to anyone who can reach the API server",
    "system:serviceaccounts": "the group of every ServiceAccount in every namespace: any Pod in the cluster could read "
                              "the namespace",
    "system:nodes": "the group of every kubelet: node credentials, not people",
    "system:bootstrappers": "the group of the bootstrap tokens that join new nodes: join credentials, not people",
    "system:monitoring": "the group Kubernetes reserves for scraping its components' metrics and health endpoints",
}
SYSTEM_GROUP_PREFIXES = {
    "system:serviceaccounts:": "the group of every ServiceAccount in that namespace: any Pod there could read the NPU "
                               "namespace (to grant the Dashboard, name its ServiceAccount in serviceAccount)",
    "system:bootstrappers:": "a group of bootstrap tokens that join new nodes: join credentials, not people",
}
SYSTEM_PREFIX_REASON = "reserved for Kubernetes itself: groups named system:... belong to its own components and " \
                       "identities"


def group_problem(value: str) -> Optional[str]:
    """Why a group cannot get the read-only grant, or None."""
    if not value.strip():
        return f"an empty group names no one; {OWN_GROUP}"
    if not value.startswith("system:"):
        return None
    reason = SYSTEM_GROUPS.get(value) or next((why for prefix, why in SYSTEM_GROUP_PREFIXES.items()
                                               if value.startswith(prefix)), SYSTEM_PREFIX_REASON)
    shown = f"'{value}'" if len(value) <= 63 and not looks_secret(value) else preview(value)
    return f"{shown} is {reason}; {OWN_GROUP}"


def service_account_problem(value: str) -> Optional[str]:
    """What to write instead of a ServiceAccount that is not a bare name (`namespace/name` and the like), or None."""
    if re.fullmatch(DNS_SUBDOMAIN, value) and len(value) <= 253:
        return None
    parts = value.split(":")[2:] if value.startswith("system:serviceaccount:") else re.split(r"[/:]", value)
    if len(parts) == 2 and re.fullmatch(DNS_LABEL, parts[0]) and re.fullmatch(DNS_SUBDOMAIN, parts[1]) \
            and not looks_secret(value):
        namespace, name = parts
        where = f"and dashboardNamespace: {namespace}" if namespace != DEFAULT_DASHBOARD_NAMESPACE else \
            f"(dashboardNamespace is {namespace} by default)"
        form = "system:serviceaccount:<namespace>:<name>" if value.startswith("system:") else \
            f"<namespace>{'/' if '/' in value else ':'}<name>"
        return (f"written as {form}, but serviceAccount takes the ServiceAccount's name alone and "
                f"dashboardNamespace its namespace; write serviceAccount: {name} {where}")
    return (f"{preview(value)} is not a ServiceAccount name; write the name alone (lowercase letters, digits, '-' and "
            "'.', e.g. kubernetes-dashboard) and its namespace in dashboardNamespace")


class DashboardAccess(SpecModel):
    """Optional read-only Kubernetes Dashboard access to the NPU namespace."""

    enabled: bool = Field(False, description="Grant read-only access to `cluster.namespace`.")
    group: Optional[str] = Field(None, description="Group that gets read-only access.")
    service_account: Optional[str] = Field(None, pattern=DNS_SUBDOMAIN,
                                           description="Name of the Dashboard's ServiceAccount, alone (its "
                                                       "namespace goes in `dashboardNamespace`).")
    dashboard_namespace: str = Field(DEFAULT_DASHBOARD_NAMESPACE, pattern=DNS_LABEL,
                                     description="Namespace of the Dashboard's ServiceAccount.")

    @field_validator("group")
    @classmethod
    def _group(cls, value: Optional[str]) -> Optional[str]:
        problem = group_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("service_account", mode="before")
    @classmethod
    def _service_account(cls, value: Any) -> Any:
        problem = service_account_problem(value.strip()) if isinstance(value, str) else None
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _subject(self) -> "DashboardAccess":
        if self.enabled and not (self.group or self.service_account):
            raise ValueError("enabled without a subject; set 'group' or 'serviceAccount'")
        return self
