"""Every container image names an exact tag (never `latest`) or a digest; optionally digests only."""
from __future__ import annotations

import re

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.images import registry_of, split_image
from model.preview import judged_at_up
from model.workloads import containers, pod_spec

DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Chart", "kubernetes:helm.sh/v4:Chart")


def image_problem(image: str, require_digest: bool, allowed: list[str]) -> str | None:
    """Why an image reference is not acceptable, or None."""
    repository, tag, digest = split_image(image)
    if digest and not DIGEST.search(image):
        return f"image '{image}' has a malformed digest; write '@sha256:' and 64 hex characters"
    if require_digest and not digest:
        return f"image '{image}' has no digest; this stack requires images pinned by '@sha256:...'"
    if not tag and not digest:
        return f"image '{image}' has no tag; write an exact tag such as ':v6.0.0' or a digest"
    if tag == "latest" and not digest:
        return f"image '{image}' uses the 'latest' tag; write an exact tag or a digest"
    if allowed and registry_of(repository) not in allowed:
        return f"image '{image}' comes from {registry_of(repository)}, not an allowed registry ({', '.join(allowed)})"
    return None


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    require_digest, allowed = bool(config.get("requireDigest", False)), list(config.get("allowedRegistries", []))
    if args.resource_type in HELM_TYPES:
        if not args.props.get("version"):
            report_violation(f"Helm {args.resource_type.rsplit(':', 1)[-1]} '{args.name}' does not pin the chart "
                             "version; set `version`", None)
        return
    spec = pod_spec(args.resource_type, args.props)
    if spec is None:
        return
    for where, container in containers(spec):
        image = container.get("image")
        problem = "no image" if not image else image_problem(image, require_digest, allowed)
        if problem:
            report_violation(f"{where} ({container.get('name', '?')}): {problem}", None)


POLICY = ResourceValidationPolicy(
    name="image-pinning",
    description="Container images and Helm charts are pinned: an exact tag that is not `latest`, or a digest.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "requireDigest": {"type": "boolean", "default": False},
        "allowedRegistries": {"type": "array", "items": {"type": "string"}, "default": []},
    }),
    remediation_steps="Pin every image with an exact tag (`repo:v6.0.0`) or a digest (`repo@sha256:...`); set a "
                      "Helm chart's `version`. Configure `requireDigest` or `allowedRegistries` per stack.",
)
