"""Container image references: their parts, the registry they come from, and whether preview knows them yet."""
from __future__ import annotations

from typing import Any, Optional

from pulumi_policy.proxy import UnknownValueError

DOCKER_HUB = "docker.io"


def split_image(image: str) -> tuple[str, str | None, str | None]:
    """`registry/repo:tag@sha256:...` -> (registry/repo, tag, digest)."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = None
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    return name, tag, digest or None


def registry_of(repository: str) -> str:
    """The registry host of a repository (Docker Hub when the first part is not a host)."""
    first = repository.split("/", 1)[0]
    return first if ("." in first or ":" in first or first == "localhost") and "/" in repository else DOCKER_HUB


def allowed_by(entry: str, image: str) -> bool:
    """ENTRY (host[:port], or host[:port]/project) holds IMAGE: the same registry, and under the project when it names
    one (a Harbor project allows its own repositories, not the whole host)."""
    repository = split_image(image)[0].lower()
    if "/" in entry:
        return repository.startswith(f"{entry.lower()}/")
    return registry_of(repository) == entry.lower()


def image_registry(image: str) -> str:
    """The registry an image reference is pulled from (`docker.io` when it names none)."""
    return registry_of(split_image(image)[0])


def known_image(container: Any) -> Optional[str]:
    """A container's image, or None when it has none or its value is not known during preview."""
    try:
        image = container.get("image")
    except UnknownValueError:
        return None
    return image if isinstance(image, str) else None
