"""Every container image of a stack that states its registries comes from one of them."""
from __future__ import annotations

from typing import Any, Iterator

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from model.images import allowed_by, image_registry, known_image
from model.kube_objects import describe, mapping, sequence
from model.preview import judged_at_up
from model.workloads import containers, pod_spec

CLUSTER_COMPONENT = "ascend-npu:index:AscendCluster"


def stated(props: Any) -> tuple[list[str], list[str]]:
    """(site registries, allowed registries) an AscendCluster states under `images`; empty when it states none."""
    images = mapping(mapping(props).get("images"))
    site, registries = images.get("registry"), sequence(images.get("registries"))
    allowed = [r.lower() for r in registries if isinstance(r, str) and r]
    return ([site.lower()] if isinstance(site, str) and site and allowed else []), allowed


def pulled_images(resource_type: str, props: Any) -> Iterator[tuple[str, str, str]]:
    """(container path, container name, image) of every container whose image is known."""
    spec = pod_spec(resource_type, props)
    for where, container in containers(spec) if spec is not None else ():
        image = known_image(container)
        if image:
            yield where, str(container.get("name") or "?"), image


def _advice(sites: list[str]) -> str:
    where = f"the site registry {' or '.join(sites)}" if sites else "an allowed registry"
    return (f"mirror it to {where} and pull it from there (ascend-npu's own images: images.registry rewrites them), "
            "or set the image's own `registry` in the stack config")


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    sites: list[str] = []
    allowed: set[str] = set()
    for resource in args.resources:
        if resource.resource_type == CLUSTER_COMPONENT:
            site, registries = stated(resource.props)
            sites += [s for s in site if s not in sites]
            allowed.update(registries)
    if not allowed:
        return  # the stack states no registries: image-pinning's `allowedRegistries` is the site-wide list
    listed = ", ".join(sorted(allowed))
    kind = "a registry or registry project" if any("/" in entry for entry in allowed) else "a registry"
    for resource in args.resources:
        try:
            for where, name, image in pulled_images(resource.resource_type, resource.props):
                if not any(allowed_by(entry, image) for entry in allowed):
                    what = describe(resource.resource_type, resource.props, resource.name)
                    report_violation(f"{what} {where} ({name}): image '{image}' comes from {image_registry(image)}, "
                                     f"not {kind} the stack allows ({listed}); {_advice(sites)}", resource.urn)
        except UnknownValueError:
            continue  # a pod spec computed during preview is judged when the update knows it


POLICY = StackValidationPolicy(
    name="allowed-registries",
    description="When the stack states its registries (`images.registry`), every container image of the stack comes "
                "from one of them (from under its project, when one names a path).",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    remediation_steps="Mirror the image to the site registry (`images.registry`) and pull it from there: the images "
                      "ascend-npu deploys are rewritten to it; or set the image's own `registry` in the stack config, "
                      "which the stack then allows.",
)
