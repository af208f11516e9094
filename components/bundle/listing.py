"""What an air-gapped site needs for one stack: images by digest, `.run` packages by sha256, the chart, versions."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Optional

from components.cluster.common.metadata import deployed_images, image_reference, image_repository
from components.config import StackSpec
from components.config.registry import REGISTRY_PART
from components.host.commands import node_packages

FORMAT = 1
POD_SPEC_PATHS = {  # where each workload kind keeps its Pod spec (the kinds the stack deploys, and the rest)
    "Pod": ("spec",), "DaemonSet": ("spec", "template", "spec"), "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


class BundleError(Exception):
    """The plan and the bundle's model disagree; nothing was written."""


@dataclass(frozen=True)
class BundleImage:
    """One image: where it is copied from, where the stack pulls it, and the archive file it travels in; `carried`
    is False for an image the site already serves (its repository is written in the site registry)."""

    name: str
    source: str
    target: str
    pulled: str
    digest: Optional[str]
    tag: Optional[str]
    archive: str
    carried: bool


@dataclass(frozen=True)
class BundlePackage:
    """One `.run` installer the stack's nodes run."""

    kind: str
    file: str
    sha256: str
    chip: Optional[str]
    arch: Optional[str]


def archive_name(image: dict[str, Any]) -> str:
    """`images/<path with _ for />_<tag or digest>.tar`: the OCI archive the image travels in."""
    path = REGISTRY_PART.sub("", image["repository"], count=1).replace("/", "_")
    version = image.get("tag") or image["digest"].replace(":", "-")
    return f"images/{path}_{version}.tar"


def copy_reference(repository: str, image: dict[str, Any], by_digest: bool) -> str:
    """`repo@digest` (BY_DIGEST, when pinned) or `repo:tag`: skopeo and crane refuse a tag beside a digest."""
    if image.get("digest") and (by_digest or not image.get("tag")):
        return f"{repository}@{image['digest']}"
    return f"{repository}:{image['tag']}"


def bundle_images(values: dict[str, Any]) -> list[BundleImage]:
    """The images of the values, each once, in the order the values name them: copied from the repository as
    written, to the one the stack pulls (the image's own registry, else the site registry)."""
    registry, seen, images = values["images"]["registry"], set(), []
    for name, image in deployed_images(values):
        pulled = image_reference(image, registry)
        if pulled in seen:
            continue
        seen.add(pulled)
        target = image_repository(image, registry)
        images.append(BundleImage(name=name, source=copy_reference(image["repository"], image, by_digest=True),
                                  target=copy_reference(target, image, by_digest=False), pulled=pulled,
                                  digest=image.get("digest"), tag=image.get("tag"), archive=archive_name(image),
                                  carried=not (registry or image.get("registry")) or target != image["repository"]))
    return images


def undigested(values: dict[str, Any]) -> list[str]:
    """The images a site registry serves that the stack pins by tag alone, as `<setting> (<reference pulled>)`."""
    registry = values["images"]["registry"]
    if not registry:
        return []
    settings = {"devicePlugin": "devicePlugin.image", "exporter": "exporter.image"}
    return [f"{settings.get(name, name.replace('validation.', 'validation.images.', 1))}.digest "
            f"({image_reference(image, registry)})" for name, image in deployed_images(values) if not image["digest"]]


def digest_warning(values: dict[str, Any]) -> str | None:
    """One warning naming each site image without a digest (docs/air-gapped.md asks for one), or None."""
    missing = undigested(values)
    if not missing:
        return None
    return (f"warning: {len(missing)} image(s) of the site registry have no digest, so no one can prove the copy there "
            f"is the image the stack was reviewed with (docs/air-gapped.md): set {'; '.join(missing)}; read one on "
            "the connected machine with `skopeo inspect --raw docker://<repository>:<tag> | sha256sum`")


def planned_images(resources: list) -> set[str]:
    """Every container image of every workload in the planned resources, as the Pods would pull it."""
    found = set()
    for resource in resources:
        kind = resource.type.rsplit(":", 1)[-1]
        if not resource.type.startswith("kubernetes:") or kind not in POD_SPEC_PATHS:
            continue
        spec: Any = resource.properties
        for key in POD_SPEC_PATHS[kind]:
            spec = spec.get(key) if isinstance(spec, dict) else None
        for list_name in CONTAINER_LISTS:
            for container in (spec or {}).get(list_name) or []:
                if isinstance(container.get("image"), str):
                    found.add(container["image"])
    return found


def bundle_packages(spec: StackSpec) -> list[BundlePackage]:
    """The installers of every node, each file once, in install order (the host layer's own choice per node)."""
    chosen: dict[str, BundlePackage] = {}
    for node in spec.nodes:
        for pkg in node_packages(spec, node):
            chosen.setdefault(pkg.file, BundlePackage(kind=pkg.kind.value, file=pkg.file, sha256=pkg.sha256,
                                                      chip=pkg.chip.value if pkg.chip else None,
                                                      arch=pkg.arch.value if pkg.arch else None))
    return list(chosen.values())


def listing(stack: str, spec: StackSpec, values: dict[str, Any], resources: list, chart: dict[str, str]) -> dict:
    """The bundle's manifest; BundleError when the plan pulls an image the values do not name, or the reverse."""
    images = bundle_images(values)
    planned, listed = planned_images(resources), {image.pulled for image in images}
    if planned != listed:
        extra, missing = sorted(planned - listed), sorted(listed - planned)
        raise BundleError("the plan and the bundle list different images: "
                          + "; ".join([f"planned, not in the bundle: {i}" for i in extra]
                                      + [f"in the bundle, not planned: {i}" for i in missing]))
    versions = spec.versions
    return {
        "format": FORMAT, "stack": stack,
        "versions": {"firmware": versions.firmware, "driver": versions.driver, "cann": versions.cann,
                     "dockerRuntime": versions.docker_runtime, "devicePlugin": values["devicePlugin"]["release"],
                     "exporter": values["exporter"]["release"], "chart": chart["version"]},
        "registry": values["images"]["registry"],
        "images": [asdict(image) for image in images],
        "packages": [asdict(pkg) for pkg in bundle_packages(spec)],
        "chart": chart,
    }
