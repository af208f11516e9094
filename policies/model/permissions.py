"""What the rules of a Role or ClusterRole grant, matched as the Kubernetes RBAC authorizer matches them."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from model.kube_objects import RBAC_GROUP, group_kind, mapping, metadata, sequence

ROLE_KINDS = ("Role", "ClusterRole")
ALL = "*"


def _strings(values: Any) -> list[str]:
    return [v for v in sequence(values) if isinstance(v, str)]


def _resource_matches(rule_resources: list[str], resource: str) -> bool:
    # As rbac/v1 ResourceMatches: `*` matches every resource and subresource, `*/<sub>` every `<x>/<sub>`.
    sub = resource.split("/", 1)[1] if "/" in resource else ""
    return any(r in (ALL, resource) or (sub and r == f"*/{sub}") for r in rule_resources)


def grants(rule: Any, group: str, resource: str, verb: str | None = None) -> bool:
    """Whether one policy rule grants `verb` (None: any verb) on `resource` (`nodes/proxy` for a subresource)
    of API `group`."""
    rule = mapping(rule)
    verbs = _strings(rule.get("verbs"))
    return (any(g in (ALL, group) for g in _strings(rule.get("apiGroups")))
            and _resource_matches(_strings(rule.get("resources")), resource)
            and (bool(verbs) if verb is None else any(v in (ALL, verb) for v in verbs)))


def limited_to_names(rule: Any) -> bool:
    """Whether the rule names the objects it applies to (`resourceNames`)."""
    return bool(_strings(mapping(rule).get("resourceNames")))


def role_rules(resource_type: str, props: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index, rule) of a Role or ClusterRole; nothing for other kinds."""
    group, kind = group_kind(resource_type)
    if group != RBAC_GROUP or kind not in ROLE_KINDS:
        return
    for i, rule in enumerate(map(mapping, sequence(mapping(props).get("rules")))):
        yield i, rule


def role_id(resource_type: str, props: Any, resource_name: str) -> str:
    """`ClusterRole:<name>` or `Role:<namespace>/<name>`, as config lists roles."""
    kind = group_kind(resource_type)[1]
    meta = metadata(props)
    name = meta.get("name") or resource_name
    return f"ClusterRole:{name}" if kind == "ClusterRole" else f"Role:{meta.get('namespace') or 'default'}/{name}"
