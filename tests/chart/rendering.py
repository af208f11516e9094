"""Render the chart with the Helm engine, and the values and objects the comparisons need."""
from __future__ import annotations

import copy
from typing import Any

import helm_python
import yaml

from components.cluster.values_contract import values_schema

RELEASE, RELEASE_NAMESPACE = "ascend-npu", "kube-system"
HELM_ONLY_LABEL = "helm.sh/chart"
MANAGED_BY = "app.kubernetes.io/managed-by"
Key = tuple[str, str, str]


def key(obj: dict[str, Any]) -> Key:
    """kind, namespace and name: what identifies an object in a cluster."""
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def render(chart: helm_python.Chart, values: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    """Every object the chart renders with `values`, parsed, by key; NOTES.txt is not an object."""
    objects: dict[Key, dict[str, Any]] = {}
    for name, text in chart.render(values, name=RELEASE, namespace=RELEASE_NAMESPACE).items():
        if name.endswith("NOTES.txt"):
            continue
        docs = [d for d in yaml.safe_load_all(text) if d]
        assert len(docs) <= 1, f"{name} renders {len(docs)} objects; one object per template"
        for doc in docs:
            assert key(doc) not in objects, f"{key(doc)} rendered twice"
            objects[key(doc)] = doc
    return objects


def as_values_file(values: dict[str, Any]) -> dict[str, Any]:
    """`values` written as a values file and read back as `helm -f` reads it."""
    return helm_python.values_from_yaml(yaml.safe_dump(values, sort_keys=False))


def replacing_maps(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Values that replace the defaults' free-form maps instead of merging into them: absent keys set to null."""
    result = copy.deepcopy(values)

    def walk(schema: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]) -> None:
        for name, child in schema.get("properties", {}).items():
            if child.get("type") != "object" or not isinstance(mine.get(name), dict):
                continue
            if "properties" in child:
                walk(child, mine[name], theirs.get(name) or {})
            else:
                for dropped in set(theirs.get(name) or {}) - set(mine[name]):
                    mine[name][dropped] = None

    walk(values_schema(), result, defaults)
    return result


def without_release_labels(obj: dict[str, Any], managed_by: str) -> dict[str, Any]:
    """The object without Helm's release labels, after checking they say what they must."""
    obj = copy.deepcopy(obj)
    holders = [obj["metadata"]] + ([obj["spec"]["template"]["metadata"]] if "template" in obj.get("spec", {}) else [])
    for holder in holders:
        labels = holder.get("labels", {})
        assert labels.pop(MANAGED_BY) == managed_by, f"{key(obj)} is not managed by {managed_by}"
        labels.pop(HELM_ONLY_LABEL, None)
    return obj


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` over `base` as Helm coalesces `--set` over `-f`: maps merge, everything else replaces."""
    result = copy.deepcopy(base)
    for name, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(name), dict):
            result[name] = merged(result[name], value)
        else:
            result[name] = copy.deepcopy(value)
    return result
