"""Containers run with a read-only root filesystem (advisory); exempt containers by name."""
from __future__ import annotations

from fnmatch import fnmatchcase

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import describe, mapping
from model.preview import judged_at_up
from model.workloads import containers, pod_spec


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    spec = pod_spec(args.resource_type, args.props)
    if spec is None:
        return
    exempt = [str(p) for p in args.get_config().get("exemptContainers", [])]
    for where, container in containers(spec):
        if where.startswith("ephemeralContainers"):
            continue  # debugging shells attached by hand, not part of what the stack ships
        name = container.get("name")
        if isinstance(name, str) and any(fnmatchcase(name, pattern) for pattern in exempt):
            continue
        if mapping(container.get("securityContext")).get("readOnlyRootFilesystem") is not True:
            report_violation(f"{describe(args.resource_type, args.props, args.name)} {where} ({name or '?'}) may "
                             "write its root filesystem; set `securityContext.readOnlyRootFilesystem: true` and "
                             "mount an `emptyDir` where it must write, or list it in `exemptContainers`", None)


POLICY = ResourceValidationPolicy(
    name="read-only-root-filesystem",
    description="Containers set `securityContext.readOnlyRootFilesystem: true`, so a compromised process cannot "
                "change the image it runs.",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "exemptContainers": {"type": "array", "items": {"type": "string"}, "default": [],
                             "description": "Container names (glob patterns) that may write their root filesystem."},
    }),
    remediation_steps="Set `securityContext.readOnlyRootFilesystem: true` on each container and mount an "
                      "`emptyDir` for paths it writes (/tmp, caches); exempt a container by name with "
                      "`exemptContainers` when it cannot run that way.",
)
