"""Cluster-wide scheduling objects: the node agents' PriorityClass and the `ascend` RuntimeClass."""
from __future__ import annotations

from typing import Any

from components.cluster.common.metadata import metadata
from components.cluster.common.node_labels import READY


def build_priority_class(values: dict[str, Any]) -> dict[str, Any]:
    """The PriorityClass of the project's node agents other than the device plugin."""
    pc = values["priorityClass"]
    return {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": metadata(values, pc["name"], "scheduling", "ascend-npu", values["versions"]["driver"]),
        "value": pc["value"],
        "globalDefault": False,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "NPU node agents of ascend-npu: scheduled ahead of workloads so every NPU node is "
                       "watched.",
    }


def build_runtime_class(values: dict[str, Any]) -> dict[str, Any]:
    """RuntimeClass `ascend`: workloads opt in to the Ascend runtime, which exists only on ready nodes."""
    rc = values["runtimeClass"]
    return {
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": metadata(values, rc["name"], "runtime", "ascend-docker-runtime",
                             values["versions"]["dockerRuntime"]),
        "handler": rc["handler"],
        # Merged into every pod that names the class, so it never lands where the handler is missing.
        "scheduling": {"nodeSelector": {READY: "true"}},
    }
