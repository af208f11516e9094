"""The exact versions a stack installs, and the explicit way out of the compatibility matrix."""
from __future__ import annotations

import re
from enum import Enum
from typing import Optional

from pydantic import Field, ValidationInfo, field_validator, model_validator

from components.config.base import SpecModel, require_pinned
from components.config.compatibility import load_sets
from components.config.redact import preview
from components.releases.catalog import known_releases

DEFAULT_SET = "6.0.0"
VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z]+)+$")
WHAT = {"firmware": "firmware", "driver": "driver", "cann": "CANN", "docker_runtime": "Ascend Docker Runtime"}
EXAMPLE = {"firmware": "7.3.0.1.231", "driver": "24.1.rc2", "CANN": "8.0.RC3", "Ascend Docker Runtime": "6.0.RC3"}


def exact(value: str, what: str) -> str:
    """A dotted version such as `24.1.rc2`, `8.0.RC3` or `7.3.0.1.231`."""
    require_pinned(value, f"{what} version", EXAMPLE[what])
    if VERSION.match(value) is None:
        raise ValueError(f"{preview(value)} is not a version; write the exact {what} version, e.g. {EXAMPLE[what]}")
    return value


class CompatibilityOverride(SpecModel):
    """Deploy a combination the matrix does not document, on purpose and with a reason."""

    firmware: str = Field(description="The firmware version being overridden (must equal `versions.firmware`).")
    driver: str = Field(description="The driver version being overridden (must equal `versions.driver`).")
    cann: str = Field(description="The CANN version being overridden (must equal `versions.cann`).")
    docker_runtime: Optional[str] = Field(
        None, description="An Ascend Docker Runtime of another MindCluster release than `versions.mindCluster` "
                          "(must equal `versions.dockerRuntime`).")
    reason: str = Field(min_length=15, description="Why this combination is safe (a ticket, a vendor note).")


class InstallerKind(str, Enum):
    """The kinds whose releases the installer catalog carries by version."""

    FIRMWARE = "firmware"
    DRIVER = "driver"
    CANN = "cann"


class InstallerOverride(SpecModel):
    """Install a firmware, driver or CANN release the catalog does not list, as a catalogued release of its kind."""

    kind: InstallerKind = Field(description="`firmware`, `driver` or `cann`.")
    version: str = Field(description="The version being overridden (must equal `versions.<kind>`).")
    release: str = Field(description="The catalogued release whose installer flags it is run with.")
    reason: str = Field(min_length=15, description="Why it installs as that release (a ticket, a vendor note).")


class Versions(SpecModel):
    """One version of each Ascend component for the whole stack."""

    mind_cluster: str = Field(
        DEFAULT_SET, description="The MindCluster release the stack runs: the device plugin's and exporter's image "
                                 "tags and the Ascend Docker Runtime default to its own, and CANN and the driver must "
                                 "be on its compatibility tables (policies/mindcluster.yaml).")
    firmware: str = Field(description="NPU firmware, e.g. `7.3.0.1.231`.")
    driver: str = Field(description="NPU driver, e.g. `24.1.rc2`.")
    cann: str = Field(description="CANN toolkit and kernels, e.g. `8.0.RC3`.")
    docker_runtime: str = Field(
        "", description="Ascend Docker Runtime, e.g. `26.1.0`; unset: the one of `mindCluster`'s release.")
    compatibility_override: Optional[CompatibilityOverride] = Field(
        None, description="Accept a combination outside the matrix; names it and says why.")
    release_overrides: list[InstallerOverride] = Field(
        default_factory=list, description="Install a firmware, driver or CANN version the release catalog does not "
                                          "list, as a catalogued release of its kind; each names it and says why.")

    @field_validator("mind_cluster")
    @classmethod
    def _set(cls, value: str) -> str:
        known = load_sets().names()
        if value not in known:
            raise ValueError(f"MindCluster '{preview(value)}' is not a catalogued release set (policies/mindcluster."
                             f"yaml); write one of {', '.join(known)}")
        return value

    @field_validator("firmware", "driver", "cann", "docker_runtime")
    @classmethod
    def _exact(cls, value: str, info: ValidationInfo) -> str:
        if info.field_name == "docker_runtime" and value == "":
            return value
        return exact(value, WHAT[str(info.field_name)])

    @field_validator("docker_runtime")
    @classmethod
    def _catalogued(cls, value: str) -> str:
        """The host scripts compare the runtime's record with what this release writes: it must be catalogued."""
        if value == "":
            return value
        known = known_releases("docker-runtime")
        if value not in known:
            raise ValueError(f"Ascend Docker Runtime '{value}' is not in the release catalog "
                             f"(components/releases/docker-runtime.yaml); write one of {', '.join(known)}")
        return value

    @model_validator(mode="after")
    def _runtime_of_the_set(self) -> "Versions":
        if not self.docker_runtime:
            # frozen model: the default is the set's own runtime, filled in once here
            object.__setattr__(self, "docker_runtime", load_sets().get(self.mind_cluster).component("dockerRuntime"))
        return self
