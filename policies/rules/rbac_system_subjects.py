"""No RoleBinding or ClusterRoleBinding names `system:anonymous`, `system:unauthenticated` or `system:masters`."""
from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import BINDING_KINDS, RBAC_GROUP, describe, group_kind, mapping, metadata, sequence, subject_id
from model.preview import judged_at_up

# By name whatever the subject's kind: the API server authenticates these names itself.
SYSTEM_SUBJECTS = {
    "system:anonymous": "the user of every request that carries no credentials",
    "system:unauthenticated": "the group of every request that carries no credentials",
    "system:masters": "a group that bypasses RBAC altogether, so a binding to it only hides who holds what",
}


def binding_id(kind: str, props, resource_name: str) -> str:
    """`ClusterRoleBinding:<name>` or `RoleBinding:<namespace>/<name>`, as config lists bindings."""
    meta = metadata(props)
    name = meta.get("name") or resource_name
    return f"{kind}:{name}" if kind == "ClusterRoleBinding" else f"{kind}:{meta.get('namespace') or 'default'}/{name}"


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    group, kind = group_kind(args.resource_type)
    if group != RBAC_GROUP or kind not in BINDING_KINDS:
        return
    if binding_id(kind, args.props, args.name) in {str(b) for b in args.get_config().get("allowedBindings", [])}:
        return
    namespace = metadata(args.props).get("namespace")
    for subject in sequence(mapping(args.props).get("subjects")):
        name = mapping(subject).get("name")
        if name in SYSTEM_SUBJECTS:
            who = subject_id(subject, namespace)
            report_violation(f"{describe(args.resource_type, args.props, args.name)} grants its role to {who}, "
                             f"{SYSTEM_SUBJECTS[name]}; bind named users, groups or ServiceAccounts instead, or list "
                             "the binding in `allowedBindings`", None)


POLICY = ResourceValidationPolicy(
    name="rbac-system-subjects",
    description="No RoleBinding or ClusterRoleBinding grants anything to `system:anonymous`, "
                "`system:unauthenticated` or `system:masters`.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "allowedBindings": {"type": "array", "items": {"type": "string"}, "default": [],
                            "description": "Bindings that may name those subjects: `ClusterRoleBinding:<name>` or "
                                           "`RoleBinding:<namespace>/<name>`."},
    }),
    remediation_steps="Bind the role to named users, groups or ServiceAccounts; never to `system:anonymous` or "
                      "`system:unauthenticated` (anyone who can reach the API server) or `system:masters`. A "
                      "binding a site must keep (e.g. a public health endpoint) is listed in `allowedBindings`.",
)
