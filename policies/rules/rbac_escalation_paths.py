"""No Role or ClusterRole grants a privilege-escalation path: escalate, bind, impersonate, or nodes/proxy."""
from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import RBAC_GROUP, describe, group_kind, sequence
from model.permissions import grants, role_id, role_rules
from model.preview import judged_at_up
from model.release_grants import release_allows

# (verb, API group, resource, why), after Kubernetes' "RBAC good practices" on privilege escalation; a `*`
# verb, group or resource grants them as surely as their names do.
PATHS = [
    ("escalate", RBAC_GROUP, "roles", "write Roles granting more than it holds"),
    ("escalate", RBAC_GROUP, "clusterroles", "write ClusterRoles granting more than it holds"),
    ("bind", RBAC_GROUP, "roles", "bind Roles it does not hold"),
    ("bind", RBAC_GROUP, "clusterroles", "bind ClusterRoles it does not hold, cluster-admin included"),
    ("impersonate", "", "serviceaccounts", "act as any ServiceAccount"),
]
# Cluster-scoped: a Role (always bound in one namespace) that names them grants nothing.
CLUSTER_PATHS = [
    ("impersonate", "", "users", "act as any user"),
    ("impersonate", "", "groups", "act as any group, system:masters included"),
    ("impersonate", "authentication.k8s.io", "uids", "act as any user ID"),
    (None, "", "nodes/proxy", "reach every kubelet's API, which runs commands in any pod of the node"),
]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    rules = list(role_rules(args.resource_type, args.props))
    if not rules:
        return
    allowed = {str(r) for r in args.get_config().get("allowedRoles", [])}
    if role_id(args.resource_type, args.props, args.name) in allowed:
        return
    paths = PATHS + (CLUSTER_PATHS if group_kind(args.resource_type)[1] == "ClusterRole" else [])
    for i, rule in rules:
        verbs = "/".join(str(v) for v in sequence(rule.get("verbs")))
        found = [(f"{verb or verbs} on {resource}", why) for verb, group, resource, why in paths
                 if grants(rule, group, resource, verb) and not release_allows(args.props, rule, resource)]
        if found:
            report_violation(f"{describe(args.resource_type, args.props, args.name)} rules[{i}] grants "
                             f"{'; '.join(f'{grant} (lets it {why})' for grant, why in found)}; list only the "
                             "verbs and resources the workload needs, or add the role to `allowedRoles`", None)


POLICY = ResourceValidationPolicy(
    name="rbac-escalation-paths",
    description="No Role or ClusterRole grants `escalate` or `bind` on roles or `impersonate` on ServiceAccounts, "
                "and no ClusterRole `impersonate` on users, groups or UIDs or any verb on `nodes/proxy`, by name or "
                "through a `*`.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "allowedRoles": {"type": "array", "items": {"type": "string"}, "default": [],
                         "description": "Roles that may keep such a grant: `ClusterRole:<name>` or "
                                        "`Role:<namespace>/<name>`."},
    }),
    remediation_steps="Remove `escalate`, `bind` and `impersonate` and `nodes/proxy` from the role (replace `*` "
                      "verbs and resources with exact ones); read kubelet metrics through `nodes/metrics` instead "
                      "of `nodes/proxy`. A controller that must keep such a grant is listed in `allowedRoles`. "
                      "An ascend-npu agent's ClusterRole keeps exactly what its release needs (`releaseGrants` in "
                      "npu-agents.yaml, matched by the agent's labels and `app.kubernetes.io/version`).",
)
