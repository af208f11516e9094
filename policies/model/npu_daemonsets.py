"""How the pack recognises the Ascend device plugin and NPU exporter DaemonSets."""
from __future__ import annotations

from typing import Any, Mapping

from model.kube_objects import labels, mapping
from model.workloads import containers, pod_spec

DEVICE_PLUGIN, EXPORTER = "device-plugin", "exporter"
DAEMONSET_KINDS = ("kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1beta2:DaemonSet",
                   "kubernetes:extensions/v1beta1:DaemonSet")
PART_OF, COMPONENT, PROJECT = "app.kubernetes.io/part-of", "app.kubernetes.io/component", "ascend-npu"
# MindCluster's image names: ascendhub `ascend-k8sdeviceplugin` and `npu-exporter`.
DEFAULT_IMAGE_PATTERNS = {DEVICE_PLUGIN: ["ascend-k8sdeviceplugin"], EXPORTER: ["npu-exporter"]}
CONFIG_KEYS = {DEVICE_PLUGIN: "devicePluginImagePatterns", EXPORTER: "exporterImagePatterns"}


def config_properties(*roles: str) -> dict[str, dict[str, Any]]:
    """The config schema entries of the image patterns for the given roles."""
    return {CONFIG_KEYS[role]: {"type": "array", "items": {"type": "string"}, "default": DEFAULT_IMAGE_PATTERNS[role],
                                "description": f"Substrings of the image names that mark the NPU {role}."}
            for role in roles}


def image_patterns(config: Mapping[str, Any], *roles: str) -> dict[str, list[str]]:
    """The configured image substrings for each role."""
    return {role: [str(p) for p in config.get(CONFIG_KEYS[role], DEFAULT_IMAGE_PATTERNS[role])] for role in roles}


def npu_role(resource_type: str, props: Any, patterns: Mapping[str, list[str]]) -> str | None:
    """`device-plugin` or `exporter` for an NPU DaemonSet, by its labels or its images; None otherwise."""
    if resource_type not in DAEMONSET_KINDS:
        return None
    spec = pod_spec(resource_type, props)
    template = mapping(mapping(mapping(props).get("spec")).get("template"))
    for found in (labels(props), labels(template)):
        if PART_OF in found and found[PART_OF] == PROJECT and COMPONENT in found and found[COMPONENT] in patterns:
            return found[COMPONENT]
    for _, container in containers(spec or {}):
        image = container.get("image")
        for role, substrings in patterns.items():
            if isinstance(image, str) and any(s in image for s in substrings):
                return role
    return None
