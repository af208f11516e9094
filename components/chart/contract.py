"""The values contract: `values.schema.json` and the chart's defaults, from the spec models and their checks."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from components.chart.switches import CHOICE
from components.cluster.chart_values import values_of
from components.releases.catalog import known_releases
from components.config.base import DNS_LABEL, DNS_SUBDOMAIN, UNPINNED_WORDS
from components.config.cluster import Alerts, Cluster, DashboardAccess, DevicePlugin, Exporter, Monitoring, Resources, \
    Validation
from components.config.hosts import Chip, ContainerRuntime
from components.config.images import DIGEST, REPOSITORY, TAG, Image
from components.config.versions import VERSION, Versions

# The pair the install guide pins for CANN 8.0.RC3 (ASCEND-FACTS section 4); only labels and the
# validation Job's name read these in the chart.
DEFAULT_VERSIONS = Versions(firmware="7.3.0.1.231", driver="24.1.rc2", cann="8.0.RC3", docker_runtime="6.0.RC3")
LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
# Unpinned words, any case, and `1.x`-style ranges: what `require_pinned` refuses in a tag.
UNPINNED_TAG = "(?i)^(" + "|".join(sorted(w for w in UNPINNED_WORDS if w.isalpha())) + r")$|\.x"
SECTIONS = (
    ("Global parameters", ("clusterName", "namespace", "managedBy", "versions", "nodeSelector", "tolerations")),
    ("Scheduling", ("priorityClass", "runtimeClass")),
    ("Device plugin", ("devicePlugin",)),
    ("NPU exporter", ("exporter",)),
    ("Monitoring", ("monitoring",)),
    ("Validation job", ("validation",)),
    ("Kubernetes Dashboard access", ("dashboardAccess",)),
)


def spec_field(model: type[BaseModel], field: str, description: str = "", **extra: Any) -> dict[str, Any]:
    """One field's schema as pydantic writes it for the spec model (optional becomes a null type)."""
    schema = dict(model.model_json_schema(by_alias=True)["properties"][field])
    for variant in schema.pop("anyOf", []):
        if variant.get("type") != "null":
            schema.update(variant)
    if "default" in schema and schema["default"] is None:
        schema["type"] = [schema["type"], "null"]
    for noise in ("title", "default"):
        schema.pop(noise, None)
    if description:
        schema["description"] = description
    return {**schema, **extra}


def string(description: str, pattern: str, **extra: Any) -> dict[str, Any]:
    """A string matching `pattern`."""
    return {"type": "string", "pattern": pattern, "description": description, **extra}


def integer(description: str, minimum: int, maximum: int) -> dict[str, Any]:
    """An integer within bounds."""
    return {"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}


def flag(description: str) -> dict[str, Any]:
    """A boolean switch."""
    return {"type": "boolean", "description": description}


def string_map(description: str) -> dict[str, Any]:
    """Free-form string keys and values (labels, selectors)."""
    return {"type": "object", "additionalProperties": {"type": "string"}, "description": description}


def subset_of(description: str, members: list[str]) -> dict[str, Any]:
    """A non-empty list of distinct members."""
    return {"type": "array", "items": {"type": "string", "enum": members}, "uniqueItems": True, "minItems": 1,
            "description": description}


def section(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object with exactly these keys; every key without a null default is required."""
    required = [k for k, v in properties.items() if "null" not in v.get("type", ())]
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties,
            **extra}


def image(what: str) -> dict[str, Any]:
    """Repository plus tag and/or digest, pinned: the checks of the spec's `Image`."""
    return section({
        "repository": spec_field(Image, "repository", pattern=REPOSITORY.pattern),
        "tag": spec_field(Image, "tag", pattern=TAG.pattern, **{"not": {"type": "string", "pattern": UNPINNED_TAG}}),
        "digest": spec_field(Image, "digest", pattern=DIGEST.pattern),
        "pullPolicy": spec_field(Image, "pullPolicy"),
    }, description=f"{what} image.", anyOf=[{"required": ["tag"], "properties": {"tag": {"type": "string"}}},
                                            {"required": ["digest"], "properties": {"digest": {"type": "string"}}}])


def release(component: str, what: str) -> dict[str, Any]:
    """The catalogued release an image is; each renders its own flags, probes and RBAC."""
    return {"type": "string", "enum": known_releases(component), "$comment": f"{CHOICE} one build per release",
            "description": f"{what} release the image is (components/releases/{component}.yaml); its flags, probes "
                           "and permissions are rendered. Must equal `image.tag` when that tag is a release."}


def tag_names_release(component: str) -> dict[str, Any]:
    """A catalogued image tag and a different `release` are refused: the tag says what the binary is."""
    return {"allOf": [{"if": {"required": ["image"], "properties": {"image": {
                          "required": ["tag"], "properties": {"tag": {"const": known}}}}},
                       "then": {"properties": {"release": {"const": known}}}} for known in known_releases(component)]}


def resources() -> dict[str, Any]:
    """CPU and memory, requests equal to limits."""
    return section({"cpu": spec_field(Resources, "cpu"), "memory": spec_field(Resources, "memory")})


def toleration() -> dict[str, Any]:
    """One Kubernetes toleration."""
    return section({
        "key": {"type": "string"}, "operator": {"type": "string", "enum": ["Exists", "Equal"]},
        "value": {"type": "string"},
        "effect": {"type": "string", "enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
        "tolerationSeconds": {"type": "integer"},
    }, required=[])


def values_schema() -> dict[str, Any]:
    """`values.schema.json`: types, enums, patterns, bounds and the keys each section allows."""
    chips, engines = [c.value for c in Chip], [e.value for e in ContainerRuntime]
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "ascend-npu chart values",
            **section({
                "clusterName": spec_field(Cluster, "name"),
                "namespace": spec_field(Cluster, "namespace", "Namespace of the NPU agents; the chart creates it."),
                "managedBy": string("`app.kubernetes.io/managed-by` of objects built from these values outside Helm "
                                    "(the Pulumi program writes `pulumi`); Helm writes its own `Helm`.", LABEL_VALUE),
                "versions": section({k: string(d, VERSION.pattern) for k, d in (
                    ("firmware", "NPU firmware on the nodes, e.g. `7.3.0.1.231`."),
                    ("driver", "NPU driver on the nodes, e.g. `24.1.rc2`."),
                    ("cann", "CANN toolkit on the nodes, e.g. `8.0.RC3`."),
                    ("dockerRuntime", "Ascend Docker Runtime on the nodes, e.g. `6.0.RC3`."))}),
                "nodeSelector": string_map("Node labels every NPU DaemonSet also requires."),
                "tolerations": {"type": "array", "items": toleration(),
                                "description": "Tolerations added to the NPU and `CriticalAddonsOnly` ones."},
                "priorityClass": section({
                    "name": string("PriorityClass of the exporter, created with the exporter.", DNS_SUBDOMAIN),
                    "value": integer("Its priority (user classes may not exceed 1000000000).", -2147483648,
                                     1_000_000_000)}),
                "runtimeClass": section({
                    "create": flag("Create the RuntimeClass workloads opt in to the Ascend runtime with; turn off "
                                   "when the engine's default runtime is already `ascend`."),
                    "name": string("Name of the RuntimeClass.", DNS_SUBDOMAIN),
                    "handler": string("Runtime handler configured in the container engine.", DNS_LABEL)}),
                "devicePlugin": section({
                    "image": image("Device plugin"),
                    "release": release("device-plugin", "Device plugin"),
                    "volcano": spec_field(DevicePlugin, "volcano"),
                    "resources": resources(),
                    "chips": subset_of("Chip types to run a device plugin DaemonSet for.", chips),
                    "priorityClassName": string("PriorityClass of the device plugin pods.", DNS_SUBDOMAIN)},
                    **tag_names_release("device-plugin")),
                "exporter": section({
                    "enabled": spec_field(Exporter, "enabled"),
                    "image": image("Exporter"),
                    "release": release("npu-exporter", "Exporter"),
                    "port": spec_field(Exporter, "port"),
                    "updateTime": spec_field(Exporter, "updateTime"),
                    "resources": resources(),
                    "containerRuntimes": subset_of("Container engines to run an exporter DaemonSet for.", engines),
                    "priorityClassName": string("PriorityClass of the exporter pods.", DNS_SUBDOMAIN)},
                    **tag_names_release("npu-exporter")),
                "monitoring": section({
                    "prometheusOperator": spec_field(Monitoring, "prometheusOperator"),
                    "prometheusNamespace": spec_field(Monitoring, "prometheusNamespace"),
                    "prometheusPodLabels": string_map("Labels of the Prometheus pods the exporter admits."),
                    "jobName": string("Prometheus job name of the exporter.", DNS_LABEL, maxLength=40),
                    "extraLabels": string_map("Labels added to the PodMonitor and PrometheusRule (e.g. the "
                                              "operator's `release` selector)."),
                    "alerts": section({"temperatureCelsius": spec_field(Alerts, "temperatureCelsius"),
                                       "hbmUsedPercent": spec_field(Alerts, "hbmUsedPercent")}),
                    "grafanaDashboard": spec_field(Monitoring, "grafanaDashboard")}),
                "validation": section({
                    "enabled": flag("Run the validation Job; needs `validation.node`."),
                    "image": image("Validation (`npu-smi`)"),
                    "node": string("Ready NPU node the Job runs on.", f"^$|{DNS_SUBDOMAIN}", maxLength=253),
                    "chip": {"type": "string", "enum": chips, "description": "Chip type of that node."},
                    "timeoutSeconds": spec_field(Validation, "timeoutSeconds", "Seconds before the Job fails."),
                    "backoffLimit": integer("Retries of the Job.", 0, 10)},
                    **{"if": {"properties": {"enabled": {"const": True}}},
                       "then": {"properties": {"node": {"minLength": 1}}}}),
                "dashboardAccess": section({
                    "enabled": spec_field(DashboardAccess, "enabled", "Grant read-only access to `namespace`; "
                                                                      "needs `group` or `serviceAccount`."),
                    "group": spec_field(DashboardAccess, "group", minLength=1),
                    "serviceAccount": spec_field(DashboardAccess, "serviceAccount"),
                    "dashboardNamespace": spec_field(DashboardAccess, "dashboardNamespace")},
                    **{"if": {"properties": {"enabled": {"const": True}}},
                       "then": {"anyOf": [{"required": ["group"], "properties": {"group": {"type": "string"}}},
                                          {"required": ["serviceAccount"],
                                           "properties": {"serviceAccount": {"type": "string"}}}]}}),
            })}


def default_values() -> dict[str, Any]:
    """`values.yaml`: the spec models' defaults, one 910B chip type on containerd, validation off."""
    return values_of(cluster=Cluster(name="ascend"), versions=DEFAULT_VERSIONS, chips=[Chip.A910B.value],
                     engines=[ContainerRuntime.CONTAINERD.value], canary="", canary_chip=Chip.A910B.value,
                     device_plugin=DevicePlugin(), exporter=Exporter(), monitoring=Monitoring(),
                     validation=Validation(enabled=False), access=DashboardAccess(), managed_by="Helm")
