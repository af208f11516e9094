"""All nodes of a stack run one driver version, unless the stack declares a rollout in progress."""
from __future__ import annotations

from collections import defaultdict

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from model.host_step_resources import HOST_COMPONENT, host_versions
from model.preview import judged_at_up


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    if str(args.get_config().get("rolloutInProgress") or "").strip():
        return
    by_driver: dict[str, list] = defaultdict(list)
    for resource in args.resources:
        if resource.resource_type == HOST_COMPONENT:
            by_driver[str(host_versions(resource.props).get("driver") or "").lower()].append(resource)
    if len(by_driver) < 2:
        return
    majority = max(sorted(by_driver), key=lambda d: len(by_driver[d]))
    for driver, resources in sorted(by_driver.items()):
        for resource in resources if driver != majority else ():
            report_violation(f"node {resource.props.get('node', resource.name)} runs driver {driver} while "
                             f"{len(by_driver[majority])} node(s) run {majority}; finish the rollout or set "
                             "`rolloutInProgress` to say why", resource.urn)


POLICY = StackValidationPolicy(
    name="single-driver-version",
    description="Every node of a stack runs the same NPU driver version, outside a declared rollout.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={"rolloutInProgress": {"type": "string", "default": ""}}),
    remediation_steps="Converge the nodes on one driver; while a staged upgrade runs, set the policy config "
                      "`rolloutInProgress` to the change ticket.",
)
