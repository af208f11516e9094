"""Each node's firmware / driver / CANN combination is documented, or overridden on purpose with a reason."""
from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from model.compatibility_matrix import load_matrix
from model.host_step_resources import HOST_COMPONENT, host_versions
from model.kube_objects import mapping
from model.preview import judged_at_up

MIN_REASON = 15


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != HOST_COMPONENT:
        return
    versions = host_versions(args.props)
    firmware, driver, cann = (str(versions.get(k, "")) for k in ("firmware", "driver", "cann"))
    problem = load_matrix().problem(firmware, driver, cann)
    if problem is None:
        return
    reason = str(mapping(args.props.get("compatibilityOverride")).get("reason") or "")
    if len(reason.strip()) < MIN_REASON:
        report_violation(f"node {args.props.get('node', args.name)}: {problem}; use a documented combination or "
                         "name this one under versions.compatibilityOverride with a reason", None)


POLICY = ResourceValidationPolicy(
    name="npu-version-compatibility",
    description="Firmware, driver and CANN of every node form a combination the compatibility matrix documents.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    remediation_steps="Pick versions from policies/compatibility.yaml, or set versions.compatibilityOverride "
                      "{firmware, driver, cann, reason} naming the exact combination and why it is safe.",
)
