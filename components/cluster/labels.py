"""The labels every object of the project carries."""
from __future__ import annotations

PART_OF = "ascend-npu"


def recommended_labels(component: str, name: str, version: str | None = None) -> dict[str, str]:
    """The `app.kubernetes.io/*` labels Kubernetes recommends, for one component of ascend-npu."""
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": "pulumi",
    }
    if version:
        labels["app.kubernetes.io/version"] = version
    return labels
