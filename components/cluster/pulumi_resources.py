"""Plain Kubernetes objects to typed pulumi_kubernetes resources, one class per apiVersion and kind."""
from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

TYPED: dict[tuple[str, str], type[pulumi.CustomResource]] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("scheduling.k8s.io/v1", "PriorityClass"): k8s.scheduling.v1.PriorityClass,
    ("node.k8s.io/v1", "RuntimeClass"): k8s.node.v1.RuntimeClass,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
    ("apps/v1", "DaemonSet"): k8s.apps.v1.DaemonSet,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
}


def snake(key: str) -> str:
    """`automountServiceAccountToken` -> `automount_service_account_token`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def register(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The typed resource for a built kind, or a CustomResource for kinds of CRDs (PodMonitor, ...)."""
    cls = TYPED.get((obj["apiVersion"], obj["kind"]))
    fields = {snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    if cls is None:
        return k8s.apiextensions.CustomResource(name, api_version=obj["apiVersion"], kind=obj["kind"],
                                                opts=opts, **fields)
    return cls(name, opts=opts, **fields)
