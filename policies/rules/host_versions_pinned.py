"""Host installer steps name exact versions, and every installer file comes with its SHA-256."""
from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from model.host_step_resources import COMMAND_TYPES, EXACT_VERSION, RUN_FILE, SHA256, command_text, env_parameters
from model.preview import judged_at_up


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in COMMAND_TYPES:
        return
    text = command_text(args.props)
    params = env_parameters(text)
    for key, value in sorted(params.items()):
        if key.endswith("_VERSION") and not EXACT_VERSION.match(value):
            report_violation(f"{key}={value!r} is not an exact version; pin it (e.g. 24.1.rc2)", None)
        if key.endswith("_FILE"):
            digest = params.get(key[:-len("_FILE")] + "_SHA256", "")
            if not SHA256.match(digest):
                report_violation(f"{key}={value} has no SHA-256 ({key[:-5]}_SHA256); every installer is verified "
                                 "before it runs", None)
    if not params and RUN_FILE.search(text) and "sha256sum" not in text:
        report_violation(f"runs {RUN_FILE.search(text).group(0)} without checking its SHA-256 first; verify it "
                         "(`sha256sum -c`) before running it", None)


POLICY = ResourceValidationPolicy(
    name="host-versions-pinned",
    description="Commands that install Ascend software name exact versions and verify each file's SHA-256.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    remediation_steps="Set exact versions (`versions.*`) and a 64-character `sha256` for every package in the stack "
                      "config; in other programs, check `sha256sum -c` before running an Ascend `.run` file.",
)
