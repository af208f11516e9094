"""No ClusterRoleBinding hands out read access to the Secrets of every namespace."""
from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from model.kube_objects import CLUSTER_ADMIN, RBAC_GROUP, describe, group_kind, mapping, metadata, sequence, subject_id
from model.permissions import grants, limited_to_names, role_rules
from model.preview import judged_at_up

READ_VERBS = ("get", "list", "watch")
# Kubernetes' default ClusterRoles that read Secrets. cluster-admin is left to `least-privilege`, which
# refuses it outside the break-glass list.
BUILTIN_SECRET_READERS = {"admin", "edit"}


def _secret_reads(rule: Any) -> list[str]:
    """The read verbs a rule grants on every Secret (a rule limited to named Secrets reads no others)."""
    if limited_to_names(rule):
        return []
    return [verb for verb in READ_VERBS if grants(rule, "", "secrets", verb)]


def _stack_readers(resources) -> dict[str, list[str]]:
    """ClusterRoles of the stack that read all Secrets, with the verbs they grant."""
    readers: dict[str, list[str]] = {}
    for resource in resources:
        if group_kind(resource.resource_type) != (RBAC_GROUP, "ClusterRole"):
            continue
        rules = role_rules(resource.resource_type, resource.props)
        verbs = sorted({verb for _, rule in rules for verb in _secret_reads(rule)})
        if verbs:
            readers[metadata(resource.props).get("name") or resource.name] = verbs
    return readers


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    allowed = {str(s) for s in args.get_config().get("allowedSecretReaders", [])}
    readers = _stack_readers(args.resources)
    for resource in args.resources:
        if group_kind(resource.resource_type) != (RBAC_GROUP, "ClusterRoleBinding"):
            continue
        ref = mapping(mapping(resource.props).get("roleRef"))
        role = ref.get("name")
        if (ref.get("kind") or "ClusterRole") != "ClusterRole" or role == CLUSTER_ADMIN:
            continue
        verbs = readers.get(role) or (list(READ_VERBS) if role in BUILTIN_SECRET_READERS else [])
        subjects = [subject_id(s, None) for s in sequence(mapping(resource.props).get("subjects"))]
        denied = [s for s in subjects if s not in allowed]
        if verbs and denied:
            report_violation(f"{describe(resource.resource_type, resource.props, resource.name)} binds ClusterRole "
                             f"'{role}', which can {'/'.join(verbs)} Secrets, cluster-wide to {', '.join(denied)}: "
                             "they read every token and password of every namespace; bind it with RoleBindings in "
                             "the namespaces needed, limit the rule to `resourceNames`, or list the subject in "
                             "`allowedSecretReaders`", resource.urn)


POLICY = StackValidationPolicy(
    name="rbac-secrets-cluster-read",
    description="No ClusterRoleBinding binds a ClusterRole that can get, list or watch all Secrets (by name, or "
                "through a `*` verb or resource; `admin` and `edit` included), except to listed subjects.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "allowedSecretReaders": {
            "type": "array", "items": {"type": "string"}, "default": [],
            "description": "Subjects that may read Secrets cluster-wide (e.g. a secrets operator): `Group:<name>`, "
                           "`User:<name>` or `ServiceAccount:<namespace>/<name>`."},
    }),
    remediation_steps="Bind Secret-reading ClusterRoles with RoleBindings in the namespaces that need them, or "
                      "limit the rule to the named Secrets (`resourceNames`). A controller that must read Secrets "
                      "everywhere is listed in `allowedSecretReaders`.",
)
