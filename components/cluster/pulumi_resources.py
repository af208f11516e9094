"""Plain Kubernetes objects to pulumi_kubernetes resources, by the type token of their apiVersion and kind."""
from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

# The provider's built-in kinds the cluster layer builds, registered by the type token of their pulumi_kubernetes class
# (`kubernetes:core/v1:Namespace`, the core group as `core/v1`) with the same inputs that class sends. Registering
# them directly spares every run the import of those classes' typed modules, about 0.3 s of CPU, which a program
# of a few nodes pays on every preview.
BUILT_IN = {("v1", "Namespace"), ("v1", "ServiceAccount"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Secret"),
            ("scheduling.k8s.io/v1", "PriorityClass"), ("node.k8s.io/v1", "RuntimeClass"),
            ("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
            ("apps/v1", "DaemonSet"), ("networking.k8s.io/v1", "NetworkPolicy"), ("batch/v1", "Job")}
# The one class of these that does more than set apiVersion and kind: a Secret's data is secret as an input and as
# an output (pulumi_kubernetes core/v1/Secret.py _internal_init). The others add only aliases from API versions
# (v1beta1, ...) this project never registered.
SECRET_FIELDS = {("v1", "Secret"): ["data", "stringData"]}


def type_token(api_version: str, kind: str) -> str:
    """The provider's type token of a built-in kind: `kubernetes:apps/v1:DaemonSet`, `kubernetes:core/v1:Secret`."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def snake(key: str) -> str:
    """`automountServiceAccountToken` -> `automount_service_account_token`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def register(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The resource of a built-in kind, or the provider's CustomResource for kinds of CRDs (PodMonitor, ...); its
    outputs as the object's fields (`resource.metadata["name"]`)."""
    key = (obj["apiVersion"], obj["kind"])
    if key not in BUILT_IN:
        fields = {snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return k8s.apiextensions.CustomResource(name, api_version=obj["apiVersion"], kind=obj["kind"],
                                                opts=opts, **fields)
    props = dict(obj)
    if key in SECRET_FIELDS:
        props.update({field: pulumi.Output.secret(props[field]) for field in SECRET_FIELDS[key] if field in props})
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=SECRET_FIELDS[key]))
    return pulumi.CustomResource(type_token(*key), name, props, opts)
