"""No cluster-admin bindings and no wildcard verbs or resources in the Roles and ClusterRoles of a stack."""
from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import (
    BINDING_KINDS,
    RBAC_GROUP,
    binds_cluster_admin,
    describe,
    group_kind,
    mapping,
    metadata,
    sequence,
    subject_id,
)
from model.preview import judged_at_up

ROLE_KINDS = ("Role", "ClusterRole")


def _wildcards(values: Any) -> list[str]:
    """`*` and `*/subresource` entries: both match every resource (or verb) of the API group."""
    return [v for v in sequence(values) if isinstance(v, str) and (v == "*" or v.startswith("*/"))]


def _what(args: ResourceValidationArgs) -> str:
    return describe(args.resource_type, args.props, args.name)


def _binding(args: ResourceValidationArgs, allowed: set[str], report: ReportViolation) -> None:
    props = args.props
    if not binds_cluster_admin(props):
        return
    namespace = metadata(props).get("namespace")
    subjects = [subject_id(s, namespace) for s in sequence(mapping(props).get("subjects"))]
    denied = [s for s in subjects if s not in allowed]
    if denied:
        report(f"{_what(args)} grants cluster-admin to {', '.join(denied)}; bind a Role or ClusterRole that lists only "
               "the verbs and resources needed, or, for a break-glass binding, add the subject to "
               "`allowedClusterAdminSubjects`", None)
    elif not subjects:
        report(f"{_what(args)} refers to cluster-admin (no subjects yet); remove it, or give it only the "
               "break-glass subjects listed in `allowedClusterAdminSubjects`", None)


def _role(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for i, rule in enumerate(map(mapping, sequence(args.props.get("rules")))):
        verbs, resources = _wildcards(rule.get("verbs")), _wildcards(rule.get("resources"))
        found = [f"{field} '{', '.join(values)}'" for field, values in (("verbs", verbs), ("resources", resources))
                 if values]
        if found:
            groups = ", ".join(repr(g) for g in sequence(rule.get("apiGroups"))) or "''"
            report(f"{_what(args)} rules[{i}] (apiGroups {groups}) uses wildcard {' and '.join(found)}; list the exact "
                   "verbs (get, list, watch, ...) and resources the workload needs", None)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    group, kind = group_kind(args.resource_type)
    if group != RBAC_GROUP:
        return
    if kind in BINDING_KINDS:
        allowed = {str(s) for s in args.get_config().get("allowedClusterAdminSubjects", [])}
        _binding(args, allowed, report_violation)
    elif kind in ROLE_KINDS:
        _role(args, report_violation)


POLICY = ResourceValidationPolicy(
    name="least-privilege",
    description="No RoleBinding or ClusterRoleBinding to cluster-admin, and no wildcard (`*`) verbs or resources in "
                "Roles and ClusterRoles.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "allowedClusterAdminSubjects": {
            "type": "array", "items": {"type": "string"}, "default": [],
            "description": "Break-glass subjects that may hold cluster-admin: `Group:<name>`, `User:<name>` or "
                           "`ServiceAccount:<namespace>/<name>`."},
    }),
    remediation_steps="Bind a Role or ClusterRole that lists exact verbs and resources instead of cluster-admin; "
                      "replace `*` verbs and resources with the ones needed. A site that must keep a break-glass "
                      "binding lists its subjects in `allowedClusterAdminSubjects`.",
)
