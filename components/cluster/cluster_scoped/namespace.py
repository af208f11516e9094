"""The namespace of the NPU node agents."""
from __future__ import annotations

from typing import Any

from components.cluster.common.metadata import metadata
from components.cluster.values_contract import chart_values
from components.config import StackSpec


def build_namespace(values: dict[str, Any]) -> dict[str, Any]:
    """A Namespace whose Pod Security level admits the privileged device plugin and exporter.

    `enforce: privileged` is scoped to this namespace only; `warn`/`audit` at `baseline` keep anything
    else that lands here visible.
    """
    meta = metadata(values, values["namespace"], "namespace", values["namespace"], values["versions"]["driver"],
                    labels={"pod-security.kubernetes.io/enforce": "privileged",
                            "pod-security.kubernetes.io/warn": "baseline",
                            "pod-security.kubernetes.io/audit": "baseline"})
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def namespace_object(spec: StackSpec) -> dict[str, Any]:
    """The Namespace for a spec; kept for callers that have not moved to `AscendCluster.namespace`."""
    return build_namespace(chart_values(spec))
