"""Workloads and Services carry the recommended `app.kubernetes.io/*` labels (advisory)."""
from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import describe, group_kind, labels
from model.preview import judged_at_up
from model.workloads import is_workload

REQUIRED = ["app.kubernetes.io/name"]
# Either ties the object to what it belongs to: the application (`part-of`) or the release (`instance`).
ANY_OF = ["app.kubernetes.io/part-of", "app.kubernetes.io/instance"]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not (is_workload(args.resource_type) or group_kind(args.resource_type) == ("", "Service")):
        return
    config = args.get_config()
    required = [str(k) for k in config.get("requiredLabels", REQUIRED)]
    any_of = [str(k) for k in config.get("anyOfLabels", ANY_OF)]
    present = labels(args.props)
    missing = [key for key in required if not present.get(key)]
    if any_of and not any(present.get(key) for key in any_of):
        missing.append(" or ".join(any_of))
    if missing:
        report_violation(f"{describe(args.resource_type, args.props, args.name)} lacks the label "
                         f"{' and the label '.join(missing)}; add {'them' if len(missing) > 1 else 'it'} under "
                         "`metadata.labels` so dashboards, alerts and `kubectl get -l` can find the object", None)


POLICY = ResourceValidationPolicy(
    name="recommended-labels",
    description="Workloads and Services carry `app.kubernetes.io/name` and `app.kubernetes.io/part-of` (or "
                "`app.kubernetes.io/instance`).",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "requiredLabels": {"type": "array", "items": {"type": "string"}, "default": REQUIRED,
                           "description": "Labels every workload and Service must carry."},
        "anyOfLabels": {"type": "array", "items": {"type": "string"}, "default": ANY_OF,
                        "description": "Labels of which at least one must be present (empty: no such check)."},
    }),
    remediation_steps="Add `app.kubernetes.io/name` and `app.kubernetes.io/part-of` (or "
                      "`app.kubernetes.io/instance`) to `metadata.labels` of every workload and Service.",
)
