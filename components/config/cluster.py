"""Cluster-side settings: namespace, runtime default, rollout and the add-ons."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Optional, TypeVar

from pydantic import Field, field_validator, model_validator

from components.config.base import CPU, DNS_LABEL, MEMORY, SpecModel, checked_labels
from components.config.drain import Drain
from components.config.hosts import Chip, ContainerRuntime
from components.config.images import Image
from components.config.releases import (
    DEVICE_PLUGIN,
    EXPORTER,
    DevicePluginImage,
    DevicePluginReleaseOverride,
    ExporterImage,
    ExporterReleaseOverride,
    ReleaseOverride,
    pinned_release,
)
from components.config.scheduling import Toleration
from components.config.timeouts import StepTimeouts

MINDCLUSTER = "swr.cn-south-1.myhuaweicloud.com/ascendhub"
# Namespaces Kubernetes itself owns: the agents' namespace gets Pod Security `privileged`, so never one of these.
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


class Cluster(SpecModel):
    """The Kubernetes cluster this stack manages."""

    name: str = Field(pattern=DNS_LABEL, description="Short name of the cluster, used in labels and names.")
    namespace: str = Field("ascend-system", pattern=DNS_LABEL, description="Namespace of the NPU agents.")
    container_runtime: ContainerRuntime = Field(ContainerRuntime.CONTAINERD,
                                                description="Engine of nodes that do not say otherwise.")
    ascend_default_runtime: bool = Field(
        False, description="Make `ascend` the engine's default runtime; by default workloads opt in through "
                           "the `ascend` RuntimeClass, so no other image can grab NPUs.")
    taint_npu_nodes: bool = Field(False, description="Taint each NPU node NoSchedule with its resource name "
                                                     "(e.g. `huawei.com/Ascend910`) once it is ready, so only "
                                                     "workloads that tolerate it land there.")
    kube_context: Optional[str] = Field(None, description="kubeconfig context to use; default: the current one.")
    tolerations: list[Toleration] = Field(
        default_factory=list, description="Tolerations added to the NPU agents' pods for taints of your own on the "
                                          "NPU nodes (the NPU taint and `CriticalAddonsOnly` are always tolerated).")

    @field_validator("namespace")
    @classmethod
    def _own_namespace(cls, value: str) -> str:
        if value in SYSTEM_NAMESPACES or value.startswith("kube-"):
            raise ValueError(f"'{value}' belongs to Kubernetes itself, and the agents' namespace gets Pod Security "
                             "`privileged`; write a namespace of its own, e.g. ascend-system")
        return value


class Rollout(SpecModel):
    """Order and pace of host changes."""

    canaries: list[str] = Field(default_factory=list,
                                description="Nodes changed first; empty means the first node in `nodes`.")
    max_parallel: int = Field(1, description="Most nodes changed at once in a wave (at least 1).")
    allow_reboot: bool = Field(False, description="Reboot a node when new firmware needs it, then wait for it.")
    reboot_timeout: int = Field(1200, description="Seconds a rebooted node has to come back (a new boot, sshd and "
                                                  "`npu-smi info` answering) before its wave fails.")
    uninstall_on_destroy: bool = Field(False, description="`pulumi destroy` uninstalls the NPU software "
                                                          "(default: leave it installed).")
    allow_downgrade: bool = Field(False, description="Install versions older than the ones a node has (default: "
                                                     "refuse before any installer, naming both versions).")
    allow_disruption: bool = Field(False, description="Replace driver or firmware and restart the container engine "
                                                      "while NPU work runs (kills it); default: refuse such a node.")
    drain: Drain = Field(default_factory=Drain,
                         description="Cordon, evict NPU Pods and uncordon around a host change that would kill "
                                     "them, and when a node leaves the stack.")
    timeouts: StepTimeouts = Field(default_factory=StepTimeouts,
                                   description="Time limits of each installer and engine restart on a node; a step "
                                               "that runs out fails, naming the kind, the node and the log.")

    @field_validator("reboot_timeout")
    @classmethod
    def _reboot_timeout(cls, value: int) -> int:
        if value < 60:
            raise ValueError(f"{value} s is less than a server takes to reboot; write 60 or more (default 1200)")
        return value

    @field_validator("max_parallel")
    @classmethod
    def _parallel(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"{value} nodes at once would never finish; write 1 or more")
        return value


class Resources(SpecModel):
    """Requests equal limits, so node agents are never the first evicted."""

    cpu: str = Field("500m", pattern=CPU, description="CPU request and limit.")
    memory: str = Field("500Mi", pattern=MEMORY, description="Memory request and limit.")


class ExporterResources(Resources):
    """The exporter's requests and limits; MindCluster's manifest gives it 1000m / 1000Mi."""

    cpu: str = Field("1000m", pattern=CPU, description="CPU request and limit.")
    memory: str = Field("1000Mi", pattern=MEMORY, description="Memory request and limit.")


AnImage = TypeVar("AnImage", bound=Image)


def _image(kind: type[AnImage], name: str, tag: str) -> AnImage:
    return kind(repository=f"{MINDCLUSTER}/{name}", tag=tag)


class CataloguedAgent(SpecModel):
    """A node agent whose image tag (or `releaseOverride`) names the catalogued release it renders as."""

    catalog_component: ClassVar[str]
    if TYPE_CHECKING:  # each agent declares these as fields of its own image and override types
        image: Image
        release_override: Optional[ReleaseOverride]

    @model_validator(mode="after")
    def _release(self) -> "CataloguedAgent":
        pinned_release(self.catalog_component, self.image, self.release_override)
        return self

    @property
    def release(self) -> str:
        """The catalogued release whose flags, probes, RBAC and metrics the agent gets."""
        return pinned_release(self.catalog_component, self.image, self.release_override)


class DevicePlugin(CataloguedAgent):
    """The Ascend device plugin DaemonSet."""

    catalog_component: ClassVar[str] = DEVICE_PLUGIN

    image: DevicePluginImage = Field(
        default_factory=lambda: _image(DevicePluginImage, "ascend-k8sdeviceplugin", "v6.0.0"),
        description="Device plugin image; its tag names the catalogued release it renders as.")
    release_override: Optional[DevicePluginReleaseOverride] = Field(
        None, description="Accept a tag the release catalog does not list; names the release it behaves as and why.")
    volcano: bool = Field(False, description="Run in Volcano mode (`-volcanoType=true`).")
    resources: Resources = Field(default_factory=Resources, description="Requests and limits.")


class Exporter(CataloguedAgent):
    """The NPU exporter DaemonSet."""

    catalog_component: ClassVar[str] = EXPORTER

    enabled: bool = Field(True, description="Deploy the exporter.")
    image: ExporterImage = Field(default_factory=lambda: _image(ExporterImage, "npu-exporter", "v6.0.0"),
                                 description="Exporter image; its tag names the catalogued release it renders as.")
    release_override: Optional[ExporterReleaseOverride] = Field(
        None, description="Accept a tag the release catalog does not list; names the release it behaves as and why.")
    # The exporter exits on a -port outside [1025, 40000] (every catalogued release, cmd/npu-exporter/main.go).
    port: int = Field(8082, ge=1025, le=40000, description="Metrics port, 1025 to 40000 (the exporter's own range).")
    update_time: Optional[int] = Field(
        None, ge=1, le=60, description="Seconds between two reads of the chips, one interval for every metric; unset: "
                                       "the release's own (v6.0.0: 5; v26.1.0: each metrics group its own interval).")
    resources: ExporterResources = Field(default_factory=ExporterResources, description="Requests and limits.")


class Alerts(SpecModel):
    """Thresholds of the NPU alerts."""

    temperature_celsius: int = Field(85, ge=40, le=120, description="Chip temperature that raises an alert.")
    hbm_used_percent: int = Field(95, ge=50, le=100, description="Memory use that raises an alert: HBM, or the "
                                                                      "memory of a chip without HBM (310P).")


class Monitoring(SpecModel):
    """Prometheus and Grafana integration."""

    prometheus_operator: bool = Field(False, description="Create a PodMonitor and PrometheusRule (needs the CRDs).")
    prometheus_namespace: str = Field("monitoring", pattern=DNS_LABEL, description="Where Prometheus runs.")
    prometheus_pod_labels: dict[str, str] = Field(
        default_factory=lambda: {"app.kubernetes.io/name": "prometheus"},
        description="Labels of the Prometheus pods the exporter admits.")
    extra_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels added to the PodMonitor and PrometheusRule, so the operator's selectors pick them up "
                    "(kube-prometheus-stack: `release: <its Helm release>`).")
    job_name: str = Field("ascend-npu-exporter", pattern=DNS_LABEL, max_length=40,
                          description="Prometheus `job` label of the exporter's series.")
    alerts: Alerts = Field(default_factory=Alerts, description="Alert thresholds.")
    grafana_dashboard: bool = Field(True, description="Ship the Grafana dashboard ConfigMap.")

    @field_validator("prometheus_pod_labels")
    @classmethod
    def _labels(cls, labels: dict[str, str]) -> dict[str, str]:
        if not labels:
            raise ValueError("no labels would admit every pod of the Prometheus namespace; write the labels of the "
                             "Prometheus pods, e.g. app.kubernetes.io/name: prometheus")
        return checked_labels(labels)

    @field_validator("extra_labels")
    @classmethod
    def _extra(cls, labels: dict[str, str]) -> dict[str, str]:
        return checked_labels(labels)

    @model_validator(mode="after")
    def _extra_needs_operator(self) -> "Monitoring":
        if self.extra_labels and not self.prometheus_operator:
            raise ValueError("extraLabels go on the PodMonitor and PrometheusRule, which exist only with "
                             "prometheusOperator: true; set it, or drop extraLabels (without the operator, Prometheus "
                             "reads the scrape Secret through additionalScrapeConfigs and labels select nothing)")
        return self


class Validation(SpecModel):
    """The end-to-end Jobs that run `npu-smi info` with one NPU on a canary of each chip type."""

    enabled: bool = Field(True, description="Run one validation Job per chip type.")
    images: dict[Chip, Image] = Field(
        default_factory=dict, description="Image per chip type (CANN of `versions.cann`, built for that chip); unset: "
                                          "the catalogued CANN image (components/releases/cann-images.yaml).")
    timeout_seconds: int = Field(600, ge=60, le=7200, description="How long `pulumi up` waits for each Job.")
    backoff_limit: int = Field(1, ge=0, le=10, description="Retries of each Job before it fails.")

    @model_validator(mode="before")
    @classmethod
    def _one_image_per_chip(cls, data: Any) -> Any:
        if isinstance(data, dict) and "image" in data:
            raise ValueError("'image' is one image for every chip type; each chip's Job needs an image built for it: "
                             "write images: {910B: {repository: ..., tag: ...}, 310P: {...}}")
        return data
