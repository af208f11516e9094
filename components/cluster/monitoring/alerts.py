"""NPU alerts, shipped as a PrometheusRule or, without the operator, as a ConfigMap.

The group `ascend-npu` (health, heat, memory, the exporter, allocatable NPUs), then the groups of
`prefailure_alerts` (what comes before a chip fails).
"""
from __future__ import annotations

from typing import Any

import yaml

from components.cluster.common.metadata import image_version, metadata
from components.cluster.exporter.daemonsets import APP
from components.cluster.monitoring.prefailure_alerts import prefailure_rule_groups

RULES_KEY = "ascend-npu-rules.yaml"


class _RulesDumper(yaml.SafeDumper):
    """Writes multi-line PromQL as literal blocks, as a person would."""


_RulesDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def _allocatable_expr(job: str) -> str:
    """NPUs the exporter sees on a node, compared with what the kubelet offers for scheduling.

    `kube_node_status_allocatable` comes from kube-state-metrics, which writes `huawei.com/Ascend910` as
    `huawei_com_Ascend910`. A node whose plugin never registered has no such series at all, so the
    right-hand side falls back to 0 for every node the exporter reports.
    """
    installed = f'max by (node) (machine_npu_nums{{job="{job}"}})'
    allocatable = 'sum by (node) (kube_node_status_allocatable{resource=~"huawei_com_Ascend.*"})'
    return f"{installed}\n  > on (node)\n(\n  {allocatable}\n  or on (node)\n  0 * {installed}\n)"


def rule_groups(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The `groups` of a Prometheus rules file (and of a PrometheusRule's spec)."""
    job = values["monitoring"]["jobName"]
    alerts = values["monitoring"]["alerts"]
    where = "NPU {{ $labels.id }} on {{ $labels.node }}"
    return [{"name": "ascend-npu", "rules": [
        {"alert": "AscendNpuChipUnhealthy", "expr": f'npu_chip_info_health_status{{job="{job}"}} != 1',
         "for": "2m", "labels": {"severity": "critical"},
         "annotations": {"summary": "An Ascend NPU reports itself unhealthy.",
                         "description": where + " has health status {{ $value }} (1 is healthy); "
                                                "check `npu-smi info` on the node."}},
        {"alert": "AscendNpuTemperatureHigh",
         "expr": f'npu_chip_info_temperature{{job="{job}"}} > {alerts["temperatureCelsius"]}',
         "for": "5m", "labels": {"severity": "warning"},
         "annotations": {"summary": "An Ascend NPU runs hot.",
                         "description": where + " is at {{ $value }} C, above "
                                                f"{alerts['temperatureCelsius']} C."}},
        {"alert": "AscendNpuHbmNearlyFull",
         # A chip without HBM that still writes the series reports a total of 0 (v6.0.0): kept out, not divided by.
         "expr": f'100 * npu_chip_info_hbm_used_memory{{job="{job}"}}\n'
                 f'  / (npu_chip_info_hbm_total_memory{{job="{job}"}} > 0) > {alerts["hbmUsedPercent"]}',
         "for": "10m", "labels": {"severity": "warning"},
         "annotations": {"summary": "An Ascend NPU's HBM is nearly full.",
                         "description": where + " uses {{ $value | humanize }}% of its HBM."}},
        {"alert": "AscendNpuMemoryNearlyFull",
         # Chips without HBM: at v26.1.0 a 310P writes no HBM series, only its DDR use (npu-exporter
         # collector/metrics/collector_for_hbm.go supportedHbmDevices, collector_for_ddr.go). A chip with HBM
         # is watched by the rule above, so it is left out here.
         "expr": f'(\n  100 * npu_chip_info_used_memory{{job="{job}"}}\n'
                 f'  / (npu_chip_info_total_memory{{job="{job}"}} > 0)\n'
                 f'  unless on (node, id) (npu_chip_info_hbm_total_memory{{job="{job}"}} > 0)\n'
                 f') > {alerts["hbmUsedPercent"]}',
         "for": "10m", "labels": {"severity": "warning"},
         "annotations": {"summary": "An Ascend NPU without HBM is nearly out of memory.",
                         "description": where + " uses {{ $value | humanize }}% of its memory."}},
        {"alert": "AscendNpuExporterDown", "expr": f'up{{job="{job}"}} == 0',
         "for": "5m", "labels": {"severity": "warning"},
         "annotations": {"summary": "The NPU exporter cannot be scraped.",
                         "description": "The exporter on {{ $labels.node }} has not answered for 5 minutes; "
                                        "its NPUs are unwatched."}},
        {"alert": "AscendNpuAllocatableBelowInstalled", "expr": _allocatable_expr(job),
         "for": "15m", "labels": {"severity": "warning"},
         "annotations": {"summary": "A node offers fewer NPUs to pods than it has.",
                         "description": "{{ $labels.node }} has {{ $value }} NPUs but Kubernetes can "
                                        "schedule fewer; check the device plugin pod and the NPUs' health."}},
    ]}, *prefailure_rule_groups(values)]


def rules_file(values: dict[str, Any]) -> str:
    """The rule groups as a Prometheus rules file."""
    return yaml.dump({"groups": rule_groups(values)}, Dumper=_RulesDumper, sort_keys=False, width=100)


def _meta(values: dict[str, Any], name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return metadata(values, name, "monitoring", APP, image_version(values["exporter"]["image"]), namespace, labels)


def build_prometheus_rule(values: dict[str, Any]) -> dict[str, Any]:
    """The alerts as a Prometheus Operator PrometheusRule beside the exporter."""
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
            "metadata": _meta(values, "ascend-npu-alerts", values["namespace"], values["monitoring"]["extraLabels"]),
            "spec": {"groups": rule_groups(values)}}


def build_rules_config_map(values: dict[str, Any]) -> dict[str, Any]:
    """The alerts as a rules file in a ConfigMap in Prometheus' namespace, for a Prometheus without the operator."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": _meta(values, "ascend-npu-alerts", values["monitoring"]["prometheusNamespace"]),
            "data": {RULES_KEY: rules_file(values)}}
