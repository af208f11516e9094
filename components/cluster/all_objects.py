"""Every cluster object of a stack, in one stable order, read from the registry: what both sinks receive."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from components.cluster import operands
from components.cluster.operands import Registry

SHARED, RBAC, WORKLOAD, EXTRA = "shared", "rbac", "workload", "extra"


@dataclass(frozen=True)
class Built:
    """One built object, the registry entry it belongs to and its part there."""

    owner: str
    part: str
    obj: dict[str, Any]


def built_objects(values: dict[str, Any], registry: Optional[Registry] = None) -> list[Built]:
    """Shared objects, then every enabled operand's ServiceAccount, then their RBAC, then their workloads and extras.

    RBAC comes before any workload, so a sink applying objects in this order never runs a pod before its grants.
    """
    registry = registry or operands.REGISTRY
    built = [Built(s.name, SHARED, s.build(values)) for s in registry.shared if s.enabled(values)]
    enabled = [op for op in registry.operands if op.enabled(values)]
    built += [Built(op.name, RBAC, op.service_account(values)) for op in enabled if op.service_account]
    built += [Built(op.name, RBAC, obj) for op in enabled for obj in op.rbac(values)]
    for op in enabled:
        built += [Built(op.name, WORKLOAD, obj) for obj in op.workloads(values)]
        built += [Built(op.name, EXTRA, obj) for build in op.extras for obj in build(values)]
    return built


def cluster_objects(values: dict[str, Any], registry: Optional[Registry] = None) -> list[dict[str, Any]]:
    """Namespace, scheduling, RBAC, device plugin, exporter and monitoring, validation, Dashboard access."""
    return [b.obj for b in built_objects(values, registry)]
