"""Cluster-wide grants a node agent's own release needs (npu-agents.yaml `releaseGrants`), exactly as defined."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from model.kube_objects import labels, mapping, sequence

AGENTS_FILE = Path(__file__).resolve().parents[1] / "npu-agents.yaml"
VERSION_LABEL = "app.kubernetes.io/version"


@lru_cache(maxsize=None)
def _entries(path: Path = AGENTS_FILE) -> tuple[tuple[tuple[tuple[str, str], ...], dict[str, Any]], ...]:
    agents = yaml.safe_load(path.read_text())["agents"]
    return tuple((tuple((str(k), str(v)) for k, v in a["labels"].items()), dict(a.get("releaseGrants") or {}))
                 for a in agents)


def _strings(value: Any) -> list[str]:
    return [v for v in sequence(value) if isinstance(v, str)]


def release_allows(props: Any, rule: Any, resource: str) -> str | None:
    """The agent release that defines this rule's grant on `resource`, or None.

    The role must carry an agent's labels and the release as its version label; the rule must name the core
    group and the resource exactly (no `*`) and hold no verb the release does not use.
    """
    role_labels = labels(props)
    release = role_labels.get(VERSION_LABEL)
    rule = mapping(rule)
    if not isinstance(release, str) or _strings(rule.get("apiGroups")) != [""] \
            or resource not in _strings(rule.get("resources")):
        return None
    verbs = set(_strings(rule.get("verbs")))
    for agent_labels, grants in _entries():
        if not all(role_labels.get(k) == v for k, v in agent_labels):
            continue
        for grant in sequence(grants.get(release)):
            grant = mapping(grant)
            if grant.get("resource") == resource and verbs and verbs <= set(_strings(grant.get("verbs"))):
                return f"{dict(agent_labels).get('app.kubernetes.io/name', 'agent')} {release}"
    return None
