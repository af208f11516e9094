"""Which catalogued release an image is: its tag, or an explicit override that names a release and says why."""
from __future__ import annotations

from typing import ClassVar, Optional

from pydantic import Field, field_validator, model_validator

from components.config.base import SpecModel
from components.config.images import Image
from components.releases.catalog import known_releases

DEVICE_PLUGIN = "device-plugin"
EXPORTER = "npu-exporter"


class ReleaseImage(Image):
    """A node agent's image: the tag is required, it names the catalogued release; a digest may pin it beside."""

    component: ClassVar[str] = ""

    @classmethod
    def required_tag(cls) -> Optional[str]:
        return f"<{' or '.join(known_releases(cls.component))}>"

    @model_validator(mode="after")
    def _pinned(self) -> "ReleaseImage":
        if self.tag is None:
            raise ValueError(f"no tag: the {self.component} image needs its tag, which names the release whose "
                             f"flags, probes and permissions it gets; write tag: one of "
                             f"{', '.join(known_releases(self.component))} (a digest is optional, beside the tag)")
        return self


class DevicePluginImage(ReleaseImage):
    """The device plugin's image."""

    component: ClassVar[str] = DEVICE_PLUGIN


class ExporterImage(ReleaseImage):
    """The NPU exporter's image."""

    component: ClassVar[str] = EXPORTER


class ReleaseOverride(SpecModel):
    """Deploy an image tag the release catalog does not list, rendered as a catalogued release, with a reason."""

    component: ClassVar[str] = ""
    tag: str = Field(description="The image tag being overridden (must equal the image's `tag`).")
    release: str = Field(description="The catalogued release whose flags, probes and RBAC the image gets.")
    reason: str = Field(min_length=15, description="Why the image behaves as that release (a ticket, a build note).")

    @field_validator("release")
    @classmethod
    def _known(cls, value: str) -> str:
        known = known_releases(cls.component)
        if value not in known:
            raise ValueError(f"'{value}' is not a catalogued {cls.component} release; write one of {', '.join(known)}")
        return value


class DevicePluginReleaseOverride(ReleaseOverride):
    """A device plugin image tag outside the catalog, rendered as a catalogued release."""

    component: ClassVar[str] = DEVICE_PLUGIN


class ExporterReleaseOverride(ReleaseOverride):
    """An NPU exporter image tag outside the catalog, rendered as a catalogued release."""

    component: ClassVar[str] = EXPORTER


def pinned_release(component: str, image: Image, override: ReleaseOverride | None) -> str:
    """The catalog release the image is; a clear error naming what to write when there is none.

    The tag names the release, also beside a digest (the digest decides what is pulled): a digest alone
    does not say which flags the binary defines.
    """
    known = ", ".join(known_releases(component))
    if image.tag is None:
        raise ValueError(f"image.digest alone does not say which {component} release it is; write the release's "
                         f"tag beside it (tag: one of {known}, digest: sha256:...)")
    if override is not None:
        if override.tag != image.tag:
            raise ValueError(f"releaseOverride.tag '{override.tag}' is not image.tag '{image.tag}'; the override "
                             "must name the exact tag it accepts")
        return override.release
    if image.tag not in known_releases(component):
        raise ValueError(f"image.tag '{image.tag}' is not in the {component} release catalog (known: {known}); pin "
                         f"one of those, or add releaseOverride: {{tag: {image.tag}, release: <one of {known}>, "
                         "reason: ...}")
    return image.tag
