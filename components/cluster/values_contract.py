"""The values contract: every chart value once, with its schema and the config it comes from.

From this one table come the values the builders read for a stack (`chart_values`), the chart's
`values.schema.json` (`values_schema`), its `values.yaml` defaults (`default_values`) and sections
(`SECTIONS`), and the Helm values `make plan` writes for a stack. README: "How to add a setting".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Union

from components.cluster.values_schema import (
    LABEL_VALUE, UNPINNED_TAG, flag, integer, object_schema, pinned_image, release_choice, spec_field, string,
    string_map, subset_of, tag_names_release, toleration, when_enabled)
from components.config import StackSpec
from components.config.base import DNS_LABEL, DNS_SUBDOMAIN
from components.config.cluster import Alerts, Cluster, DevicePlugin, Exporter, Monitoring, Resources, Validation
from components.config.dashboard import DashboardAccess
from components.config.hosts import Chip, ContainerRuntime
from components.config.images import DIGEST, REPOSITORY, TAG, Image
from components.config.versions import VERSION, Versions
from components.releases.catalog import known_releases

NODE_AGENT_PRIORITY_CLASS = "ascend-npu-node-agent"
# The highest value a user-defined PriorityClass may have; only the system-* classes rank above it.
NODE_AGENT_PRIORITY = 1_000_000_000
# The pair Huawei's CANN 8.0.RC3 install guide (hiascend.com) pins, policies/compatibility.yaml; only labels and the
# validation Job's name read these in the chart.
DEFAULT_VERSIONS = Versions(firmware="7.3.0.1.231", driver="24.1.rc2", cann="8.0.RC3", docker_runtime="6.0.RC3")


@dataclass(frozen=True)
class Sources:
    """What values are made of: the config's sections, the chips and engines in use, each chip's Job."""

    cluster: Cluster
    versions: Versions
    chips: list[str]
    engines: list[str]
    jobs: dict[str, tuple[str, Image]]  # chip -> (canary, image) of its validation Job
    device_plugin: DevicePlugin
    exporter: Exporter
    monitoring: Monitoring
    validation: Validation
    access: DashboardAccess
    managed_by: str = "pulumi"


@dataclass(frozen=True)
class Value:
    """One value: its schema and how a stack's sources give it."""

    schema: dict[str, Any]
    source: Callable[[Sources], Any]


@dataclass(frozen=True)
class Group:
    """An object of named values; `extra` holds schema keywords across its keys."""

    fields: dict[str, Union[Value, "Group"]]
    extra: dict[str, Any] = field(default_factory=dict)

    def values(self, sources: Sources) -> dict[str, Any]:
        return {k: f.values(sources) if isinstance(f, Group) else f.source(sources) for k, f in self.fields.items()}

    def schema(self) -> dict[str, Any]:
        return object_schema({k: f.schema() if isinstance(f, Group) else f.schema for k, f in self.fields.items()},
                             **self.extra)


@dataclass(frozen=True)
class ChartOnly:
    """A value no stack config sets, and why: the stack gets the chart's default."""

    value: Any
    why: str

    def __call__(self, _: Sources) -> Any:
        return self.value


def image(what: str, pick: Callable[[Sources], Image]) -> Group:
    """Repository plus tag and/or digest, pinned: the checks of the config's `Image`."""
    return Group({
        "repository": Value(spec_field(Image, "repository", pattern=REPOSITORY.pattern), lambda s: pick(s).repository),
        "tag": Value(spec_field(Image, "tag", pattern=TAG.pattern,
                                **{"not": {"type": "string", "pattern": UNPINNED_TAG}}), lambda s: pick(s).tag),
        "digest": Value(spec_field(Image, "digest", pattern=DIGEST.pattern), lambda s: pick(s).digest),
        "pullPolicy": Value(spec_field(Image, "pullPolicy"), lambda s: pick(s).pull_policy),
    }, pinned_image(what))


NO_IMAGE = Image.model_construct(repository="", tag=None, digest=None, pull_policy="IfNotPresent")


def validation_image(chip: str) -> Group:
    """A chip's validation image; empty (no repository, no tag) for a chip the stack has no Job for."""
    def pick(s: Sources) -> Image:
        return s.jobs[chip][1] if chip in s.jobs else NO_IMAGE
    return Group({
        "repository": Value(spec_field(Image, "repository", pattern=f"^$|{REPOSITORY.pattern}"),
                            lambda s: pick(s).repository),
        "tag": Value(spec_field(Image, "tag", pattern=TAG.pattern, **{"not": {"type": "string", "pattern": UNPINNED_TAG}}),
                     lambda s: pick(s).tag),
        "digest": Value(spec_field(Image, "digest", pattern=DIGEST.pattern), lambda s: pick(s).digest),
        "pullPolicy": Value(spec_field(Image, "pullPolicy"), lambda s: pick(s).pull_policy),
    }, {"description": f"Image of the {chip} Job: CANN of `versions.cann` built for {chip} (`npu-smi` and the driver "
                      "come from the node through the Ascend runtime)."})


def validation_job(chip: str) -> Group:
    """Where and with what one chip type's Job runs."""
    return Group({
        "node": Value(string(f"Ready {chip} node (a canary) the Job runs on.", f"^$|{DNS_SUBDOMAIN}", maxLength=253),
                      lambda s: s.jobs[chip][0] if chip in s.jobs else ""),
        "image": validation_image(chip)})


def job_needed(chip: str) -> dict[str, Any]:
    """With validation on and a plugin for `chip`, its Job needs a node and a pinned image."""
    pinned = pinned_image(f"{chip} validation")
    return {"if": {"required": ["devicePlugin", "validation"], "properties": {
                "devicePlugin": {"properties": {"chips": {"contains": {"const": chip}}}},
                "validation": {"properties": {"enabled": {"const": True}}}}},
            "then": {"properties": {"validation": {"properties": {"jobs": {"properties": {chip: {"properties": {
                "node": {"minLength": 1},
                "image": {"anyOf": pinned["anyOf"], "properties": {"repository": {"minLength": 1}}}}}}}}}}}}


def resources(pick: Callable[[Sources], Resources]) -> Group:
    """CPU and memory, requests equal to limits."""
    return Group({"cpu": Value(spec_field(Resources, "cpu"), lambda s: pick(s).cpu),
                  "memory": Value(spec_field(Resources, "memory"), lambda s: pick(s).memory)})


def release(component: str, what: str, pick: Callable[[Sources], str]) -> Value:
    """The catalogued release of an image: a chart switch."""
    return Value(release_choice(component, what, known_releases(component)), pick)


VERSION_VALUES = (("firmware", "firmware", "NPU firmware on the nodes, e.g. `7.3.0.1.231`."),  # key, field, text
                  ("driver", "driver", "NPU driver on the nodes, e.g. `24.1.rc2`."),
                  ("cann", "cann", "CANN toolkit on the nodes, e.g. `8.0.RC3`."),
                  ("dockerRuntime", "docker_runtime", "Ascend Docker Runtime on the nodes, e.g. `6.0.RC3`."))
CHIPS, ENGINES = [c.value for c in Chip], [e.value for e in ContainerRuntime]

CONTRACT: tuple[tuple[str, dict[str, Union[Value, Group]]], ...] = (
    ("Global parameters", {
        "clusterName": Value(spec_field(Cluster, "name"), lambda s: s.cluster.name),
        "namespace": Value(spec_field(Cluster, "namespace", "Namespace of the NPU agents; the chart creates it."),
                           lambda s: s.cluster.namespace),
        "managedBy": Value(string("`app.kubernetes.io/managed-by` of objects built from these values outside Helm "
                                  "(the Pulumi program writes `pulumi`); Helm writes its own `Helm`.", LABEL_VALUE),
                           lambda s: s.managed_by),
        "versions": Group({key: Value(string(text, VERSION.pattern), lambda s, attr=attr: getattr(s.versions, attr))
                           for key, attr, text in VERSION_VALUES}),
        "nodeSelector": Value(string_map("Node labels every NPU DaemonSet also requires."), ChartOnly(
            {}, "the host layer labels exactly the nodes it installed, and the agents select those labels; a further "
                "selector would only leave installed nodes without a device plugin")),
        "tolerations": Value({"type": "array", "items": toleration(),
                              "description": "Tolerations added to the NPU and `CriticalAddonsOnly` ones."},
                             lambda s: [t.as_kubernetes() for t in s.cluster.tolerations]),
    }),
    ("Scheduling", {
        "priorityClass": Group({
            "name": Value(string("PriorityClass of the exporter, created with the exporter.", DNS_SUBDOMAIN),
                          ChartOnly(NODE_AGENT_PRIORITY_CLASS, "the project's own class, made beside the exporter; "
                                                               "a rename would replace it under running pods")),
            "value": Value(integer("Its priority (user classes may not exceed 1000000000).", -2147483648,
                                   NODE_AGENT_PRIORITY), ChartOnly(NODE_AGENT_PRIORITY, "already the highest a "
                                                                   "user-defined class may have"))}),
        "runtimeClass": Group({
            "create": Value(flag("Create the RuntimeClass workloads opt in to the Ascend runtime with; turn off "
                                 "when the engine's default runtime is already `ascend`."),
                            lambda s: not s.cluster.ascend_default_runtime),
            "name": Value(string("Name of the RuntimeClass.", DNS_SUBDOMAIN), ChartOnly(
                "ascend", "workloads opt in with `runtimeClassName: ascend` (the validation Jobs too); a rename "
                          "would break every one of them")),
            "handler": Value(string("Runtime handler configured in the container engine.", DNS_LABEL), ChartOnly(
                "ascend", "the host layer registers the Ascend runtime in containerd and Docker under this name"))}),
    }),
    ("Device plugin", {
        "devicePlugin": Group({
            "image": image("Device plugin", lambda s: s.device_plugin.image),
            "release": release("device-plugin", "Device plugin", lambda s: s.device_plugin.release),
            "volcano": Value(spec_field(DevicePlugin, "volcano"), lambda s: s.device_plugin.volcano),
            "resources": resources(lambda s: s.device_plugin.resources),
            "chips": Value(subset_of("Chip types to run a device plugin DaemonSet for.", CHIPS),
                           lambda s: list(s.chips)),
            "priorityClassName": Value(string("PriorityClass of the device plugin pods.", DNS_SUBDOMAIN), ChartOnly(
                "system-node-critical", "the official manifests' class: without the plugin no NPU is allocatable, "
                                        "so it is the last pod a node may evict"))},
            tag_names_release(known_releases("device-plugin"))),
    }),
    ("NPU exporter", {
        "exporter": Group({
            "enabled": Value(spec_field(Exporter, "enabled"), lambda s: s.exporter.enabled),
            "image": image("Exporter", lambda s: s.exporter.image),
            "release": release("npu-exporter", "Exporter", lambda s: s.exporter.release),
            "port": Value(spec_field(Exporter, "port"), lambda s: s.exporter.port),
            "updateTime": Value(spec_field(Exporter, "updateTime"), lambda s: s.exporter.update_time),
            "resources": resources(lambda s: s.exporter.resources),
            "containerRuntimes": Value(subset_of("Container engines to run an exporter DaemonSet for.", ENGINES),
                                       lambda s: list(s.engines)),
            "priorityClassName": Value(string("PriorityClass of the exporter pods.", DNS_SUBDOMAIN), ChartOnly(
                NODE_AGENT_PRIORITY_CLASS, "the class this chart creates for it (`priorityClass.name`)"))},
            tag_names_release(known_releases("npu-exporter"))),
    }),
    ("Monitoring", {
        "monitoring": Group({
            "prometheusOperator": Value(spec_field(Monitoring, "prometheusOperator"),
                                        lambda s: s.monitoring.prometheus_operator),
            "prometheusNamespace": Value(spec_field(Monitoring, "prometheusNamespace"),
                                         lambda s: s.monitoring.prometheus_namespace),
            "prometheusPodLabels": Value(string_map("Labels of the Prometheus pods the exporter admits."),
                                         lambda s: dict(s.monitoring.prometheus_pod_labels)),
            "jobName": Value(spec_field(Monitoring, "jobName"), lambda s: s.monitoring.job_name),
            "extraLabels": Value(string_map("Labels added to the PodMonitor and PrometheusRule (e.g. the "
                                            "operator's `release` selector)."),
                                 lambda s: dict(s.monitoring.extra_labels)),
            "alerts": Group({
                "temperatureCelsius": Value(spec_field(Alerts, "temperatureCelsius"),
                                            lambda s: s.monitoring.alerts.temperature_celsius),
                "hbmUsedPercent": Value(spec_field(Alerts, "hbmUsedPercent"),
                                        lambda s: s.monitoring.alerts.hbm_used_percent)}),
            "grafanaDashboard": Value(spec_field(Monitoring, "grafanaDashboard"),
                                      lambda s: s.monitoring.grafana_dashboard)}),
    }),
    ("Validation job", {
        "validation": Group({
            "enabled": Value(flag("Run one validation Job per chip type of `devicePlugin.chips`; each needs its "
                                  "`jobs.<chip>.node` and `jobs.<chip>.image`."), lambda s: s.validation.enabled),
            "jobs": Group({chip: validation_job(chip) for chip in CHIPS}),
            "timeoutSeconds": Value(spec_field(Validation, "timeoutSeconds", "Seconds before a Job fails."),
                                    lambda s: s.validation.timeout_seconds),
            "backoffLimit": Value(spec_field(Validation, "backoffLimit", "Retries of each Job."),
                                  lambda s: s.validation.backoff_limit)}),
    }),
    ("Kubernetes Dashboard access", {
        "dashboardAccess": Group({
            "enabled": Value(spec_field(DashboardAccess, "enabled", "Grant read-only access to `namespace`; "
                                                                    "needs `group` or `serviceAccount`."),
                             lambda s: s.access.enabled),
            "group": Value(spec_field(DashboardAccess, "group", minLength=1), lambda s: s.access.group),
            "serviceAccount": Value(spec_field(DashboardAccess, "serviceAccount"), lambda s: s.access.service_account),
            "dashboardNamespace": Value(spec_field(DashboardAccess, "dashboardNamespace"),
                                        lambda s: s.access.dashboard_namespace)},
            when_enabled({"anyOf": [{"required": ["group"], "properties": {"group": {"type": "string"}}},
                                    {"required": ["serviceAccount"], "properties": {"serviceAccount": {
                                        "type": "string"}}}]})),
    }),
)
ALL_VALUES = Group({key: setting for _, settings in CONTRACT for key, setting in settings.items()},
                   {"allOf": [job_needed(chip) for chip in CHIPS]})
SECTIONS = tuple((title, tuple(settings)) for title, settings in CONTRACT)


def stack_sources(spec: StackSpec) -> Sources:
    """A stack's sources: its sections, the chips and engines its nodes have, each chip's Job."""
    return Sources(cluster=spec.cluster, versions=spec.versions,
                   chips=[c.value for c in Chip if any(n.chip is c for n in spec.nodes)],
                   engines=[e.value for e in ContainerRuntime if any(n.container_runtime is e for n in spec.nodes)],
                   jobs=spec.validation_jobs, device_plugin=spec.device_plugin,
                   exporter=spec.exporter, monitoring=spec.monitoring, validation=spec.validation,
                   access=spec.dashboard_access)


def chart_only_values(group: Group = ALL_VALUES, prefix: str = "") -> list[tuple[str, ChartOnly]]:
    """(path, value) of every chart value no stack config sets, in contract order."""
    found: list[tuple[str, ChartOnly]] = []
    for key, setting in group.fields.items():
        if isinstance(setting, Group):
            found += chart_only_values(setting, f"{prefix}{key}.")
        elif isinstance(setting.source, ChartOnly):
            found.append((prefix + key, setting.source))
    return found


def chart_values(spec: StackSpec, managed_by: str = "pulumi") -> dict[str, Any]:
    """The values of one stack: what the program builds its objects from (`Helm` for a values file)."""
    return ALL_VALUES.values(replace(stack_sources(spec), managed_by=managed_by))


def default_values() -> dict[str, Any]:
    """`values.yaml`: the config model's defaults, one 910B chip type on containerd, validation off."""
    return ALL_VALUES.values(Sources(
        cluster=Cluster(name="ascend"), versions=DEFAULT_VERSIONS, chips=[Chip.A910B.value],
        engines=[ContainerRuntime.CONTAINERD.value], jobs={},
        device_plugin=DevicePlugin(), exporter=Exporter(), monitoring=Monitoring(),
        validation=Validation(enabled=False), access=DashboardAccess(), managed_by="Helm"))


def values_schema() -> dict[str, Any]:
    """`values.schema.json`: types, enums, patterns, bounds and the keys each group allows."""
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "ascend-npu chart values",
            **ALL_VALUES.schema()}
