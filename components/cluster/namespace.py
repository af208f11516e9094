"""The namespace of the NPU node agents."""
from __future__ import annotations

from components.cluster.labels import recommended_labels
from components.spec import StackSpec


def namespace_object(spec: StackSpec) -> dict:
    """A Namespace whose Pod Security level admits the privileged device plugin and exporter.

    `enforce: privileged` is scoped to this namespace only; `warn`/`audit` at `baseline` keep anything
    else that lands here visible.
    """
    labels = recommended_labels("namespace", spec.cluster.namespace)
    labels.update({
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "baseline",
        "pod-security.kubernetes.io/audit": "baseline",
    })
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": spec.cluster.namespace, "labels": labels}}
