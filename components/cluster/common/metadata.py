"""The labels every object of the project carries, and the metadata built from them."""
from __future__ import annotations

from typing import Any, Iterator, Optional

from components.cluster.common.template_functions import Entries, template_function
from components.config.registry import rewritten

PART_OF = "ascend-npu"


def recommended_labels(component: str, name: str, version: Optional[str] = None,
                       managed_by: str = "pulumi") -> dict[str, str]:
    """The `app.kubernetes.io/*` labels Kubernetes recommends, for one component of ascend-npu."""
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": managed_by,
    }
    if version:
        labels["app.kubernetes.io/version"] = version
    return labels


@template_function("ascend-npu.repository")
def image_repository(image: dict[str, Any], registry: Optional[str]) -> str:
    """The repository pulled: its registry part replaced by the image's own `registry`, else by `images.registry`."""
    return rewritten(image["repository"], image.get("registry") or registry)


@template_function("ascend-npu.image")
def image_reference(image: dict[str, Any], registry: Optional[str]) -> str:
    """`repo:tag@digest`, `repo@digest` or `repo:tag` of the repository pulled (`image_repository`)."""
    ref = image_repository(image, registry)
    if image.get("tag"):
        ref += f":{image['tag']}"
    if image.get("digest"):
        ref += f"@{image['digest']}"
    return ref


def pulled_image(image: dict[str, Any], registry: Optional[str]) -> dict[str, Any]:
    """What a Pod pulls: the repository pulled, the tag, the digest and the pull policy."""
    return {"repository": image_repository(image, registry), "tag": image["tag"], "digest": image["digest"],
            "pullPolicy": image["pullPolicy"]}


def deployed_images(values: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, image values) of every image the values deploy: plugin, exporter, each chip's validation Job."""
    yield "devicePlugin", values["devicePlugin"]["image"]
    if values["exporter"]["enabled"]:
        yield "exporter", values["exporter"]["image"]
    if values["validation"]["enabled"]:
        for chip, job in values["validation"]["jobs"].items():
            if job["node"]:
                yield f"validation.{chip}", job["image"]


@template_function("ascend-npu.pullSecrets")
def pull_secrets(images: dict[str, Any]) -> Entries:
    """`imagePullSecrets` naming `images.pullSecret`, for a Pod spec; nothing when it is unset."""
    return {"imagePullSecrets": [{"name": images["pullSecret"]}]} if images["pullSecret"] else {}


@template_function("ascend-npu.imageVersion")
def image_version(image: dict[str, Any]) -> str:
    """A label-safe version of an image: its tag, else the first 12 hex digits of its digest."""
    if image.get("tag"):
        return image["tag"]
    return "sha256-" + image["digest"].split(":", 1)[1][:12]


@template_function("ascend-npu.labels")
def object_labels(values: dict[str, Any], component: str, name: str, version: Optional[str],
                  extra: dict[str, str]) -> dict[str, str]:
    """The recommended labels of one object plus its own labels, which win."""
    return {**recommended_labels(component, name, version, values["managedBy"]), **extra}


def metadata(values: dict[str, Any], name: str, component: str, app: str, version: str,
             namespace: Optional[str] = None, labels: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Object metadata: name, namespace (when namespaced) and the recommended labels plus any extra ones."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = object_labels(values, component, app, version, labels or {})
    return meta


def selector_labels(app: str, instance: str) -> dict[str, str]:
    """The immutable labels a workload selects its pods by."""
    return {"app.kubernetes.io/name": app, "app.kubernetes.io/instance": instance}
