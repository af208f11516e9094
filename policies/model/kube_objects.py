"""Kinds, metadata and RBAC references of Kubernetes resources as the engine sends them."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

RBAC_GROUP = "rbac.authorization.k8s.io"
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
CLUSTER_ADMIN = "cluster-admin"
EMPTY: Mapping[str, Any] = MappingProxyType({})


def mapping(value: Any) -> Mapping[str, Any]:
    """The value when it is a mapping, else an empty one (missing or malformed fields read as absent)."""
    return value if isinstance(value, Mapping) else EMPTY


def sequence(value: Any) -> Sequence[Any]:
    """The value when it is a list, else an empty one."""
    return value if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else ()


def group_kind(resource_type: str) -> tuple[str, str]:
    """`kubernetes:networking.k8s.io/v1:Ingress` -> ("networking.k8s.io", "Ingress"); the core group is ""."""
    parts = resource_type.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return "", ""
    group = parts[1].rsplit("/", 1)[0] if "/" in parts[1] else parts[1]
    return ("" if group == "core" else group), parts[2]


def metadata(props: Any) -> Mapping[str, Any]:
    """The object's `metadata`, empty when absent."""
    return mapping(mapping(props).get("metadata"))


def labels(props: Any) -> Mapping[str, Any]:
    """The object's labels, empty when absent."""
    return mapping(metadata(props).get("labels"))


def annotations(props: Any) -> Mapping[str, Any]:
    """The object's annotations, empty when absent."""
    return mapping(metadata(props).get("annotations"))


def describe(resource_type: str, props: Any, resource_name: str) -> str:
    """`Service 'kubernetes-dashboard/web'`: the kind and the Kubernetes name (the Pulumi name when unset)."""
    meta = metadata(props)
    name = meta.get("name") or resource_name
    namespace = meta.get("namespace")
    return f"{group_kind(resource_type)[1] or resource_type} '{namespace + '/' if namespace else ''}{name}'"


def binds_cluster_admin(props: Any) -> bool:
    """Whether a RoleBinding or ClusterRoleBinding refers to the ClusterRole `cluster-admin`."""
    ref = mapping(mapping(props).get("roleRef"))
    # roleRef.kind is required by the API; read a missing one as ClusterRole rather than let the binding pass.
    return ref.get("name") == CLUSTER_ADMIN and (ref.get("kind") or "ClusterRole") == "ClusterRole"


def subject_id(subject: Any, binding_namespace: str | None) -> str:
    """`ServiceAccount:<namespace>/<name>`, `Group:<name>` or `User:<name>`, as config lists subjects."""
    subject = mapping(subject)
    kind, name = subject.get("kind") or "?", subject.get("name") or "?"
    if kind == "ServiceAccount":
        return f"ServiceAccount:{subject.get('namespace') or binding_namespace or 'default'}/{name}"
    return f"{kind}:{name}"
