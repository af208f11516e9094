"""The values contract: every chart value once, with its schema and the config it comes from.

From this one table come the values the builders read for a stack (`chart_values`), the chart's
`values.schema.json` (`values_schema`), its `values.yaml` defaults (`default_values`) and sections
(`SECTIONS`), and the Helm values `make plan` writes for a stack. How to add one: CONTRIBUTING.md,
"Adding a setting or a config section".
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from operator import not_
from typing import Any, Callable, Union

from components.cluster.values_schema import (
    LABEL_VALUE,
    UNPINNED_TAG,
    ChartOnly,
    Group,
    Value,
    flag,
    integer,
    model_value,
    pinned_image,
    release_choice,
    setting,
    spec_field,
    string,
    string_map,
    subset_of,
    tag_names_release,
    toleration,
    when_enabled,
)
from components.config import StackSpec
from components.config.base import DNS_LABEL, DNS_SUBDOMAIN
from components.config.cluster import Cluster, Validation
from components.config.hosts import Chip, ContainerRuntime
from components.config.images import DIGEST, REPOSITORY, TAG, Image
from components.config.registry import REGISTRY, Images, pull_secret_name
from components.config.setting_paths import SectionDefaults
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
    """What values are made of: a stack's sections (its attributes), the chips and engines in use, each chip's Job."""

    spec: Any  # a StackSpec, or SectionDefaults for the chart's own values
    chips: list[str]
    engines: list[str]
    jobs: dict[str, tuple[str, Image]]  # chip -> (canary, image) of its validation Job
    managed_by: str = "pulumi"

    def __getattr__(self, name: str) -> Any:
        if name == "spec":  # not set yet: no section to read
            raise AttributeError(name)
        return getattr(self.spec, name)


def image_fields(value: Callable[..., Value], repository: str) -> dict[str, Value]:
    """Repository plus tag and/or digest, pinned: the checks of the config's `Image`."""
    unpinned = {"not": {"type": "string", "pattern": UNPINNED_TAG}}
    return {"repository": value("repository", pattern=repository),
            "tag": value("tag", pattern=TAG.pattern, **unpinned),
            "digest": value("digest", pattern=DIGEST.pattern), "pullPolicy": value("pullPolicy"),
            "registry": value("registry", pattern=REGISTRY.pattern)}


def image(what: str, path: str) -> Group:
    """The image block of the setting at PATH."""
    return Group(image_fields(lambda key, **extra: setting(f"{path}.{key}", **extra), REPOSITORY.pattern),
                 pinned_image(what))


NO_IMAGE = Image.model_construct(repository="", tag=None, digest=None, pull_policy="IfNotPresent", registry=None)


def validation_image(chip: str) -> Group:
    """A chip's validation image; empty (no repository, no tag) for a chip the stack has no Job for."""
    def pick(s: Sources) -> Image:
        return s.jobs[chip][1] if chip in s.jobs else NO_IMAGE
    return Group(image_fields(lambda key, **extra: model_value(Image, key, pick, **extra), f"^$|{REPOSITORY.pattern}"),
                 {"description": f"Image of the {chip} Job: CANN of `versions.cann` built for {chip} (`npu-smi` and "
                                 "the driver come from the node through the Ascend runtime)."})


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


def resources(path: str) -> Group:
    """CPU and memory, requests equal to limits."""
    return Group({"cpu": setting(f"{path}.cpu"), "memory": setting(f"{path}.memory")})


def release(component: str, what: str, path: str) -> Value:
    """The catalogued release of an image: a chart switch."""
    return setting(path, release_choice(component, what, known_releases(component)))


VERSION_VALUES = (("firmware", "NPU firmware on the nodes, e.g. `7.3.0.1.231`."),  # key, text
                  ("driver", "NPU driver on the nodes, e.g. `24.1.rc2`."),
                  ("cann", "CANN toolkit on the nodes, e.g. `8.0.RC3`."),
                  ("dockerRuntime", "Ascend Docker Runtime on the nodes, e.g. `6.0.RC3`."))
CHIPS, ENGINES = [c.value for c in Chip], [e.value for e in ContainerRuntime]

CONTRACT: tuple[tuple[str, dict[str, Union[Value, Group]]], ...] = (
    ("Global parameters", {
        "clusterName": setting("cluster.name"),
        "namespace": setting("cluster.namespace", description="Namespace of the NPU agents; the chart creates it."),
        "managedBy": Value(string("`app.kubernetes.io/managed-by` of objects built from these values outside Helm "
                                  "(the Pulumi program writes `pulumi`); Helm writes its own `Helm`.", LABEL_VALUE),
                           lambda s: s.managed_by),
        "versions": Group({key: setting(f"versions.{key}", string(text, VERSION.pattern))
                           for key, text in VERSION_VALUES}),
        "nodeSelector": Value(string_map("Node labels every NPU DaemonSet also requires."), ChartOnly(
            {}, "the host layer labels exactly the nodes it installed, and the agents select those labels; a further "
                "selector would only leave installed nodes without a device plugin")),
        "tolerations": setting("cluster.tolerations", {
            "type": "array", "items": toleration(),
            "description": "Tolerations added to the NPU and `CriticalAddonsOnly` ones."},
            lambda tolerations: [t.as_kubernetes() for t in tolerations]),
    }),
    ("Images", {
        "images": Group({
            "registry": setting("images.registry", pattern=REGISTRY.pattern),
            "pullSecret": Value(spec_field(Images, "pullSecret", "Existing `kubernetes.io/dockerconfigjson` Secret in "
                                           "`namespace` every Pod names in `imagePullSecrets`."),
                                lambda s: pull_secret_name(s.spec))}),
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
            "create": setting("cluster.ascendDefaultRuntime", flag(
                "Create the RuntimeClass workloads opt in to the Ascend runtime with; turn off when the engine's "
                "default runtime is already `ascend`."), not_),
            "name": Value(string("Name of the RuntimeClass.", DNS_SUBDOMAIN), ChartOnly(
                "ascend", "workloads opt in with `runtimeClassName: ascend` (the validation Jobs too); a rename "
                          "would break every one of them")),
            "handler": Value(string("Runtime handler configured in the container engine.", DNS_LABEL), ChartOnly(
                "ascend", "the host layer registers the Ascend runtime in containerd and Docker under this name"))}),
    }),
    ("Device plugin", {
        "devicePlugin": Group({
            "image": image("Device plugin", "devicePlugin.image"),
            "release": release("device-plugin", "Device plugin", "devicePlugin.release"),
            "volcano": setting("devicePlugin.volcano"),
            "resources": resources("devicePlugin.resources"),
            "chips": Value(subset_of("Chip types to run a device plugin DaemonSet for.", CHIPS),
                           lambda s: list(s.chips)),
            "containerRuntimes": Value(subset_of(
                "Container engines of the NPU nodes. With a release whose duplicate-NPU detector dials the engine "
                "(v26.1.0), the Docker nodes of each chip get a DaemonSet of their own that mounts Docker's socket.",
                ENGINES), lambda s: list(s.engines)),
            "priorityClassName": Value(string("PriorityClass of the device plugin pods.", DNS_SUBDOMAIN), ChartOnly(
                "system-node-critical", "the official manifests' class: without the plugin no NPU is allocatable, "
                                        "so it is the last pod a node may evict"))},
            tag_names_release(known_releases("device-plugin"))),
    }),
    ("NPU exporter", {
        "exporter": Group({
            "enabled": setting("exporter.enabled"),
            "image": image("Exporter", "exporter.image"),
            "release": release("npu-exporter", "Exporter", "exporter.release"),
            "port": setting("exporter.port"),
            "updateTime": setting("exporter.updateTime"),
            "resources": resources("exporter.resources"),
            "containerRuntimes": Value(subset_of("Container engines to run an exporter DaemonSet for.", ENGINES),
                                       lambda s: list(s.engines)),
            "priorityClassName": Value(string("PriorityClass of the exporter pods.", DNS_SUBDOMAIN), ChartOnly(
                NODE_AGENT_PRIORITY_CLASS, "the class this chart creates for it (`priorityClass.name`)"))},
            tag_names_release(known_releases("npu-exporter"))),
    }),
    ("Monitoring", {
        "monitoring": Group({
            "prometheusOperator": setting("monitoring.prometheusOperator"),
            "prometheusNamespace": setting("monitoring.prometheusNamespace"),
            "prometheusPodLabels": setting("monitoring.prometheusPodLabels", string_map(
                "Labels of the Prometheus pods the exporter admits."), dict),
            "jobName": setting("monitoring.jobName"),
            "extraLabels": setting("monitoring.extraLabels", string_map(
                "Labels added to the PodMonitor and PrometheusRule (e.g. the operator's `release` selector)."), dict),
            "alerts": Group({"temperatureCelsius": setting("monitoring.alerts.temperatureCelsius"),
                             "hbmUsedPercent": setting("monitoring.alerts.hbmUsedPercent")}),
            "grafanaDashboard": setting("monitoring.grafanaDashboard")}),
    }),
    ("Validation job", {
        "validation": Group({
            "enabled": setting("validation.enabled", flag(
                "Run one validation Job per chip type of `devicePlugin.chips`; each needs its `jobs.<chip>.node` and "
                "`jobs.<chip>.image`.")),
            "jobs": Group({chip: validation_job(chip) for chip in CHIPS}),
            "timeoutSeconds": setting("validation.timeoutSeconds", description="Seconds before a Job fails."),
            "backoffLimit": setting("validation.backoffLimit", description="Retries of each Job.")}),
    }),
    ("Kubernetes Dashboard access", {
        "dashboardAccess": Group({
            "enabled": setting("dashboardAccess.enabled", description="Grant read-only access to `namespace`; "
                                                                      "needs `group` or `serviceAccount`."),
            "group": setting("dashboardAccess.group", minLength=1),
            "serviceAccount": setting("dashboardAccess.serviceAccount"),
            "dashboardNamespace": setting("dashboardAccess.dashboardNamespace")},
            when_enabled({"anyOf": [{"required": ["group"], "properties": {"group": {"type": "string"}}},
                                    {"required": ["serviceAccount"], "properties": {"serviceAccount": {
                                        "type": "string"}}}]})),
    }),
)
ALL_VALUES = Group({key: value for _, values in CONTRACT for key, value in values.items()},
                   {"allOf": [job_needed(chip) for chip in CHIPS]})
SECTIONS = tuple((title, tuple(settings)) for title, settings in CONTRACT)


def stack_sources(spec: StackSpec) -> Sources:
    """A stack's sources: its sections, the chips and engines its nodes have, each chip's Job."""
    return Sources(spec, chips=[c.value for c in Chip if any(n.chip is c for n in spec.nodes)],
                   engines=[e.value for e in ContainerRuntime if any(n.container_runtime is e for n in spec.nodes)],
                   jobs=spec.validation_jobs)


def chart_only_values(group: Group = ALL_VALUES, prefix: str = "") -> list[tuple[str, ChartOnly]]:
    """(path, value) of every chart value no stack config sets, in contract order."""
    found: list[tuple[str, ChartOnly]] = []
    for key, value in group.fields.items():
        if isinstance(value, Group):
            found += chart_only_values(value, f"{prefix}{key}.")
        elif isinstance(value.source, ChartOnly):
            found.append((prefix + key, value.source))
    return found


def chart_values(spec: StackSpec, managed_by: str = "pulumi") -> dict[str, Any]:
    """The values of one stack: what the program builds its objects from (`Helm` for a values file)."""
    return ALL_VALUES.values(replace(stack_sources(spec), managed_by=managed_by))


def default_values() -> dict[str, Any]:
    """`values.yaml`: the config model's defaults, one 910B chip type on containerd, validation off."""
    sections = SectionDefaults(cluster=Cluster(name="ascend"), versions=DEFAULT_VERSIONS,
                               validation=Validation(enabled=False))
    return ALL_VALUES.values(Sources(sections, chips=[Chip.A910B.value], engines=[ContainerRuntime.CONTAINERD.value],
                                     jobs={}, managed_by="Helm"))


def values_schema() -> dict[str, Any]:
    """`values.schema.json`: types, enums, patterns, bounds and the keys each group allows."""
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "ascend-npu chart values",
            **ALL_VALUES.schema()}
