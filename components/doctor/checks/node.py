"""The Node object of a stack's node: it exists, and advertises as many NPUs as its host has."""
from __future__ import annotations

from typing import Optional

from components.cluster.common.node_labels import READY, RESOURCE_NAMES
from components.config.hosts import NodeSpec
from components.doctor.checks.pending import allocatable
from components.doctor.findings import ERROR, Finding, Kind

NODE_MISSING = Kind("node-missing", ERROR, "no Node of the stack's name in the cluster")
ALLOCATABLE = Kind("allocatable-mismatch", ERROR, "the node advertises another number of NPUs than its host has")
KINDS = (NODE_MISSING, ALLOCATABLE)


def check(node: NodeSpec, obj: Optional[dict], chips: Optional[int]) -> list[Finding]:
    """CHIPS is what npu-smi showed (None: not read; the stack's npuCount is taken)."""
    if obj is None:
        return [NODE_MISSING(node.name, "no Node of this name in the cluster", "the server must have joined the "
                             "cluster under the name the stack gives it (`kubectl get nodes`); fix the name in "
                             "nodes[] or join the server")]
    labels = obj["metadata"].get("labels") or {}
    resource, want = RESOURCE_NAMES[node.chip.value], chips if chips is not None else node.npu_count
    have = allocatable(obj).get(resource, 0)
    if labels.get(READY) == "true" and have != want:
        return [ALLOCATABLE(node.name, f"allocatable {resource} is {have}, the host has {want} chip(s)",
                            "read the device plugin Pod's log on this node (it lists the devices it found); an "
                            "unhealthy chip is withheld")]
    return []
