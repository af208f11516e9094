"""The shape of a catalog entry: its source, and the cluster components' entries (device plugin, NPU exporter)."""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

GoType = Literal["bool", "int", "int64", "uint", "string", "duration"]
HostPathType = Literal["", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"]
Engine = Literal["containerd", "docker"]
Text = Annotated[str, Field(min_length=1)]


class CatalogModel(BaseModel):
    """Keys as written in the YAML; unknown keys rejected; frozen once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def manifest(self) -> dict[str, Any]:
        """The YAML mapping again, as a Kubernetes object part takes it (keys as written, unset ones left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class CamelModel(CatalogModel):
    """A cluster entry's part: camelCase keys, as in the release's Kubernetes manifests."""

    model_config = ConfigDict(alias_generator=to_camel)


class Source(CatalogModel):
    """Where the entry's facts were read: a repository, its tag (or commit), and the files at it."""

    repository: Text
    tag: Text
    commit: Optional[str] = None
    paths: list[str] = Field(min_length=1)


class Mount(CamelModel):
    """A host path the release's manifest mounts, at the same path in the container."""

    name: Text
    path: Text
    type: Optional[HostPathType] = None
    read_only: bool = False


class Probe(CamelModel):
    """The liveness probe timings of the release's own manifest."""

    initial_delay_seconds: int = Field(ge=0)
    period_seconds: int = Field(ge=1)
    timeout_seconds: int = Field(ge=1)
    failure_threshold: int = Field(ge=1)


class Healthz(CamelModel):
    """The health endpoint: the flags that switch it on, its port and path, the probe on it."""

    flags: list[str]
    port: int = Field(ge=1, le=65535)
    path: Text
    probe: Probe


class SecurityContext(CamelModel):
    """The container securityContext the release's manifest sets."""

    privileged: bool
    read_only_root_filesystem: bool
    run_as_user: Optional[int] = None
    run_as_group: Optional[int] = None


class Rule(CamelModel):
    """One RBAC rule."""

    api_groups: list[str]
    resources: list[str] = Field(min_length=1)
    verbs: list[str] = Field(min_length=1)


class Rbac(CamelModel):
    """Cluster-wide rules, extra cluster-wide rules per chip, and the rules in the device-info namespace."""

    cluster: list[Rule]
    chips: dict[str, list[Rule]] = {}
    device_info_namespace: Text
    device_info: list[Rule]


class EnvVar(CamelModel):
    """A container variable: a value, or where Kubernetes takes it from."""

    name: Text
    value: Optional[str] = None
    value_from: Optional[dict[str, Any]] = None


class ClusterEntry(CamelModel):
    """What the cluster builders read of any cluster component's release."""

    source: Source
    flags: dict[str, GoType] = Field(min_length=1)
    args: list[str]
    healthz: Optional[Healthz]
    security_context: SecurityContext
    mounts: list[Mount]


class DevicePlugin(ClusterEntry):
    """A device plugin release (device-plugin.yaml)."""

    volcano_args: list[str]
    volcano_mounts: list[Mount]
    ascend_docker_env: Text
    env: list[EnvVar]
    detector_mounts: list[Mount]
    engine_detector_mounts: dict[Engine, list[Mount]]
    host_pid: bool = Field(alias="hostPID")
    chip_security_context: dict[str, SecurityContext] = {}
    rbac: Rbac


class NpuExporter(ClusterEntry):
    """An NPU exporter release (npu-exporter.yaml)."""

    update_time: Optional[int]
    port_range: list[int] = Field(min_length=2, max_length=2)
    paths: list[str]
    automount_service_account_token: bool
    chip_labels: list[str]
    labels: list[str]
    metrics: list[str] = Field(min_length=1)
