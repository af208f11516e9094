"""The shape of the host components' entries: their installers' flags, exit codes and records, and the CANN images."""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import Field

from components.releases.entries import CatalogModel, Source, Text

Flags = Annotated[list[str], Field(min_length=1)]
Mode = Annotated[str, Field(pattern=r"^0[0-7]{3}$")]


class Installer(CatalogModel):
    """A .run installer: every flag it takes (`--name` or `--name=` for one with a value) and its exit codes."""

    flags: Flags
    exit_codes: dict[int, str] = Field(min_length=1)
    root_only: bool = False


class PackageInstaller(Installer):
    """An installer ascend-deployer drives: the flags of a fresh install, an upgrade and an uninstall."""

    fresh: Flags
    upgrade: Flags
    uninstall: Flags


class CannInstaller(PackageInstaller):
    """The CANN toolkit and kernels installers, and where each records its version."""

    toolkit_record: Text
    kernels_record: Text


class DriverUser(CatalogModel):
    """The user and group the driver runs as, and how to create them."""

    name: Text
    group: Text
    member_of_group: bool
    fix: Text


class HdkInstaller(PackageInstaller):
    """The driver or firmware installer: the exit code that asks for a reboot, the record it leaves."""

    reboot_exit_code: int
    record_file: Text


class DriverInstaller(HdkInstaller):
    user: DriverUser
    modules: Text


class FirmwareInstaller(HdkInstaller):
    needs_driver: bool
    takes_effect: Text


class Origin(CatalogModel):
    """Where a record's text was seen."""

    repository: Text
    tag: Optional[str] = None
    path: Text


class Record(CatalogModel):
    """A version.info a release leaves; `inferred` when nobody has shown us one."""

    origin: Origin
    inferred: bool = False
    observed_on: Optional[str] = None


class DriverRecord(Record):
    innerversion: Text
    compatible_version: Text
    compatible_version_fw: Text


class FirmwareRecord(Record):
    package_version: Text
    compatible_version_drv: Text


class StdinPrompt(CatalogModel):
    """A question the installer reads stdin for: the answer, and the actions that ask it."""

    answer: Text
    actions: list[str] = Field(alias="for", min_length=1)


class RuntimeRecord(CatalogModel):
    """The runtime's record file: its name in the install path, mode, lines (placeholders filled in)."""

    file: Text
    mode: Mode
    lines: list[str] = Field(min_length=1)
    rewritten_by: list[str]


class DockerConfig(CatalogModel):
    file: Text
    creates_when_missing: bool
    sets: dict[str, Any]
    json_indent: int
    mode_after_install: Mode
    mode_after_uninstall: Mode


class ContainerdConfig(CatalogModel):
    file: Text
    creates_when_missing: bool
    cgroup_v2_sets: Optional[dict[str, Any]] = None
    cgroup_v1_sets: Optional[dict[str, Any]] = None
    adds_ascend_runtime: bool
    sets_default_runtime_name: Optional[str] = None
    needs_runc_table: bool
    rewrites_whole_file: bool
    mode_after_install: Mode


class EngineConfigs(CatalogModel):
    docker: DockerConfig
    containerd: ContainerdConfig


class RuntimeUninstall(CatalogModel):
    scene_default: Text
    without_scene_config: Text
    removes: list[str]
    engine_config: Text


class RuntimeInstaller(Installer):
    """The Ascend Docker Runtime installer: its scenes, the prompt it asks, its record and engine config edits."""

    install_scenes: Flags
    install_scene_default: Text
    install_path_default: Text
    stdin_prompt: Optional[StdinPrompt]
    record: RuntimeRecord
    engine_config: EngineConfigs
    uninstall: RuntimeUninstall


class DockerRuntime(CatalogModel):
    """An Ascend Docker Runtime release (docker-runtime.yaml)."""

    source: Source
    installer: RuntimeInstaller


class NpuDriver(CatalogModel):
    """An NPU driver release (npu-driver.yaml)."""

    source: Source
    installer: DriverInstaller
    record: DriverRecord


class NpuFirmware(CatalogModel):
    """An NPU firmware release (npu-firmware.yaml)."""

    source: Source
    installer: FirmwareInstaller
    record: FirmwareRecord


class Cann(CatalogModel):
    """A CANN release (cann.yaml)."""

    source: Source
    installer: CannInstaller


class CannImages(CatalogModel):
    """The CANN images of one CANN version (cann-images.yaml): the repository, a tag per chip, their platforms."""

    repository: Text
    platforms: list[Literal["x86_64", "aarch64"]] = Field(min_length=1)
    tags: dict[str, Text] = Field(min_length=1)
    source: Source
