"""The PodDisruptionBudgets that select a Pod: named when the API server refuses to evict it under several."""
from __future__ import annotations

from typing import Optional

from components.kubeapi.client import Api, ApiError

# kubernetes v1.36.3 pkg/registry/core/pod/storage/eviction.go L223-228: a Pod that more than one budget selects
# cannot be evicted (500, this message); only removing a budget helps, so the drain names them.
SEVERAL = "more than one PodDisruptionBudget"


def _requirement(expression: dict, labels: dict[str, str]) -> bool:
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def selects(selector: Optional[dict], labels: dict[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector (apimachinery v0.36.3 pkg/apis/meta/v1/helpers.go L36-42): no selector
    selects nothing, an empty one everything."""
    if selector is None:
        return False
    wanted = selector.get("matchLabels") or {}
    return all(labels.get(k) == v for k, v in wanted.items()) and \
        all(_requirement(e, labels) for e in selector.get("matchExpressions") or [])


def covering(api: Api, pod: dict) -> str:
    """The budgets in the Pod's namespace that select it, said for a person; how to see them if listing is denied."""
    meta = pod["metadata"]
    namespace, labels = meta["namespace"], meta.get("labels") or {}
    try:
        budgets = list(api.items(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"))
    except ApiError as err:
        return f"`kubectl get pdb -n {namespace}` shows them (listing them here failed: {err.message})"
    names = sorted(b["metadata"]["name"] for b in budgets if selects((b.get("spec") or {}).get("selector"), labels))
    return f"budgets selecting it: {', '.join(names) or 'none found'}; delete or narrow all but one"
