"""Where Kubernetes workload kinds keep their pod spec and containers."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Iterator

POD_SPEC_PATHS = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:core/v1:ReplicationController": ("spec", "template", "spec"),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    "kubernetes:batch/v1:Job": ("spec", "template", "spec"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "kubernetes:core/v1:PodTemplate": ("template", "spec"),
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def is_workload(resource_type: str) -> bool:
    """Whether the resource kind carries a pod spec (any served API version)."""
    return _normalised(resource_type) in POD_SPEC_PATHS


def _normalised(resource_type: str) -> str:
    return resource_type.replace("/v1beta1:", "/v1:").replace("/v1beta2:", "/v1:")


def pod_spec(resource_type: str, props: Any) -> Any:
    """The pod spec of a workload resource, or None for other kinds or when it is absent."""
    path = POD_SPEC_PATHS.get(_normalised(resource_type))
    if path is None:
        return None
    node = props
    for key in path:
        if not isinstance(node, dict) and not hasattr(node, "get"):
            return None
        node = node.get(key)
        if node is None:
            return None
    return node if isinstance(node, Mapping) else None


def pod_labels(resource_type: str, props: Any) -> Mapping[str, Any]:
    """The labels the workload's pods carry: a Pod's own, else its template's; empty when absent."""
    path = POD_SPEC_PATHS.get(_normalised(resource_type))
    if path is None:
        return {}
    node = props
    for key in (*path[:-1], "metadata", "labels"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def containers(spec: Any) -> Iterator[tuple[str, Any]]:
    """(`containers[0]`-style path, container) for every container list of a pod spec."""
    for field in CONTAINER_LISTS:
        listed = spec.get(field)
        if not isinstance(listed, Sequence) or isinstance(listed, str):
            continue
        for i, container in enumerate(listed):
            if isinstance(container, Mapping):
                yield f"{field}[{i}]", container
