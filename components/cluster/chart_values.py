"""The chart values: every configurable leaf of the cluster objects, as one plain JSON-able dict."""
from __future__ import annotations

from typing import Any

from components.config import StackSpec
from components.config.cluster import Cluster, DashboardAccess, DevicePlugin, Exporter, Monitoring, Resources, \
    Validation
from components.config.hosts import Chip, ContainerRuntime
from components.config.images import Image
from components.config.versions import Versions

NODE_AGENT_PRIORITY_CLASS = "ascend-npu-node-agent"
# The highest value a user-defined PriorityClass may have; only the system-* classes rank above it.
NODE_AGENT_PRIORITY = 1_000_000_000


def image_values(image: Image) -> dict[str, Any]:
    """An image block: repository, tag, digest, pullPolicy."""
    return {"repository": image.repository, "tag": image.tag, "digest": image.digest,
            "pullPolicy": image.pull_policy}


def resource_values(resources: Resources) -> dict[str, str]:
    """Requests and limits alike: cpu and memory."""
    return {"cpu": resources.cpu, "memory": resources.memory}


def chart_values(spec: StackSpec) -> dict[str, Any]:
    """The would-be `values.yaml` of the chart for one stack; builders read nothing else."""
    canary = spec.node(spec.canaries[0])
    return values_of(
        cluster=spec.cluster, versions=spec.versions,
        chips=[c.value for c in Chip if any(n.chip is c for n in spec.nodes)],
        engines=[e.value for e in ContainerRuntime if any(n.container_runtime is e for n in spec.nodes)],
        canary=canary.name, canary_chip=canary.chip.value, device_plugin=spec.device_plugin,
        exporter=spec.exporter, monitoring=spec.monitoring, validation=spec.validation,
        access=spec.dashboard_access)


def values_of(*, cluster: Cluster, versions: Versions, chips: list[str], engines: list[str], canary: str,
              canary_chip: str, device_plugin: DevicePlugin, exporter: Exporter, monitoring: Monitoring,
              validation: Validation, access: DashboardAccess, managed_by: str = "pulumi") -> dict[str, Any]:
    """The values from the spec's sections, the chips and engines in use and the canary node."""
    return {
        "clusterName": cluster.name,
        "namespace": cluster.namespace,
        "managedBy": managed_by,
        "versions": {"firmware": versions.firmware, "driver": versions.driver,
                     "cann": versions.cann, "dockerRuntime": versions.docker_runtime},
        "nodeSelector": {},
        "tolerations": [],
        "priorityClass": {"name": NODE_AGENT_PRIORITY_CLASS, "value": NODE_AGENT_PRIORITY},
        "runtimeClass": {"create": not cluster.ascend_default_runtime, "name": "ascend", "handler": "ascend"},
        "devicePlugin": {
            "image": image_values(device_plugin.image),
            "release": device_plugin.release,
            "volcano": device_plugin.volcano,
            "resources": resource_values(device_plugin.resources),
            "chips": list(chips),
            "priorityClassName": "system-node-critical",
        },
        "exporter": {
            "enabled": exporter.enabled,
            "image": image_values(exporter.image),
            "release": exporter.release,
            "port": exporter.port,
            "updateTime": exporter.update_time,
            "resources": resource_values(exporter.resources),
            "containerRuntimes": list(engines),
            "priorityClassName": NODE_AGENT_PRIORITY_CLASS,
        },
        "monitoring": {
            "prometheusOperator": monitoring.prometheus_operator,
            "prometheusNamespace": monitoring.prometheus_namespace,
            "prometheusPodLabels": dict(monitoring.prometheus_pod_labels),
            "jobName": "ascend-npu-exporter",
            "extraLabels": {},
            "alerts": {"temperatureCelsius": monitoring.alerts.temperature_celsius,
                       "hbmUsedPercent": monitoring.alerts.hbm_used_percent},
            "grafanaDashboard": monitoring.grafana_dashboard,
        },
        "validation": {
            "enabled": validation.enabled,
            "image": image_values(validation.image),
            "node": canary,
            "chip": canary_chip,
            "timeoutSeconds": validation.timeout_seconds,
            "backoffLimit": 1,
        },
        "dashboardAccess": {"enabled": access.enabled, "group": access.group,
                            "serviceAccount": access.service_account,
                            "dashboardNamespace": access.dashboard_namespace},
    }
