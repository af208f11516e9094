"""How Prometheus finds the exporter: one path per setup, a PodMonitor with the operator, else a scrape Secret."""
from __future__ import annotations

from typing import Any

import yaml

from components.cluster.common.metadata import image_version, metadata
from components.cluster.exporter.daemonsets import APP, PORT_NAME
from components.cluster.monitoring.alerts import build_prometheus_rule, build_rules_config_map
from components.cluster.monitoring.grafana_dashboard import build_dashboard_config_map

SCRAPE_KEY = "ascend-npu-scrape.yaml"
# Target labels every exporter series carries: (discovered meta label, target label). The node labels
# come from `attach_metadata: node`, which needs Prometheus >= 2.35 and list/watch on nodes.
# None may be a label the exporter writes itself: its chip series carry `namespace`, `pod_name` and
# `container_name` of the WORKLOAD holding the NPU, and a target label of the same name would rename
# theirs to `exported_namespace`. So the exporter pod's own namespace and name get prefixed names; the
# exporter's labels stay as written, with no `honor_labels` that would let them override ours.
RELABELS = (
    ("__meta_kubernetes_pod_node_name", "node"),
    ("__meta_kubernetes_node_label_ascend_npu_io_chip", "chip"),
    ("__meta_kubernetes_node_label_accelerator_type", "accelerator_type"),
    ("__meta_kubernetes_namespace", "exporter_namespace"),
    ("__meta_kubernetes_pod_name", "exporter_pod"),
)


def scrape_job(values: dict[str, Any]) -> dict[str, Any]:
    """One Prometheus scrape config: pods of the exporter in the agents' namespace, on the metrics port."""
    keep = [{"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "regex": APP, "action": "keep"},
            {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": PORT_NAME,
             "action": "keep"}]
    return {
        "job_name": values["monitoring"]["jobName"],
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [values["namespace"]]},
                                   "attach_metadata": {"node": True}}],
        "relabel_configs": keep + [{"source_labels": [source], "target_label": target} for source, target in RELABELS],
    }


def _meta(values: dict[str, Any], name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return metadata(values, name, "monitoring", APP, image_version(values["exporter"]["image"]), namespace, labels)


def build_scrape_secret(values: dict[str, Any]) -> dict[str, Any]:
    """The scrape job as a Secret in Prometheus' namespace, the form `additionalScrapeConfigs` reads."""
    body = yaml.safe_dump([scrape_job(values)], sort_keys=False)
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": _meta(values, "ascend-npu-scrape-config", values["monitoring"]["prometheusNamespace"]),
            "stringData": {SCRAPE_KEY: body}}


# Target labels the Prometheus Operator gives every PodMonitor target before the PodMonitor's own
# relabelings run (prometheus-operator pkg/prometheus/promcfg.go, generatePodMonitorConfig, v0.93.0):
# `namespace`, `container` and `pod` of the exporter pod and `endpoint`; dropped first, so the Secret path
# and this one label every series alike.
OPERATOR_TARGET_LABELS = ("namespace", "container", "pod", "endpoint")


def build_pod_monitor(values: dict[str, Any]) -> dict[str, Any]:
    """The same job as a Prometheus Operator PodMonitor beside the exporter pods."""
    relabelings: list[dict[str, Any]] = [{"action": "labeldrop", "regex": "|".join(OPERATOR_TARGET_LABELS)}]
    relabelings += [{"sourceLabels": [source], "targetLabel": target} for source, target in RELABELS]
    relabelings.append({"targetLabel": "job", "replacement": values["monitoring"]["jobName"]})
    return {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
        "metadata": _meta(values, APP, values["namespace"], values["monitoring"]["extraLabels"]),
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": APP}},
            "namespaceSelector": {"matchNames": [values["namespace"]]},
            "attachMetadata": {"node": True},
            "podMetricsEndpoints": [{"port": PORT_NAME, "path": "/metrics", "relabelings": relabelings}],
        },
    }


def monitoring_objects(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Scrape job, alerts and dashboard: the operator's kinds with the operator, else a Secret and a ConfigMap."""
    if values["monitoring"]["prometheusOperator"]:
        objects = [build_pod_monitor(values), build_prometheus_rule(values)]
    else:
        objects = [build_scrape_secret(values), build_rules_config_map(values)]
    if values["monitoring"]["grafanaDashboard"]:
        objects.append(build_dashboard_config_map(values))
    return objects
