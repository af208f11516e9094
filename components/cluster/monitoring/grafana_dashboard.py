"""The Grafana dashboard of the NPUs, as a ConfigMap the Grafana dashboard sidecar picks up."""
from __future__ import annotations

import json
from typing import Any

from components.cluster.common.metadata import image_version, metadata
from components.cluster.exporter.daemonsets import APP
from components.cluster.monitoring.prefailure_alerts import (
    LINK_UPS_PER_HALF_HOUR,
    SINGLE_BIT_ERRORS_PER_HOUR,
    hccs_crc_errors,
    roce_errors,
)

DASHBOARD_KEY = "ascend-npu.json"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _panel(panel_id: int, title: str, expr: str, unit: str, grid: dict[str, int], kind: str = "timeseries",
           thresholds: list[dict[str, Any]] | None = None, legend: str = "") -> dict[str, Any]:
    steps = thresholds or [{"color": "green", "value": None}]
    return {
        "id": panel_id, "type": kind, "title": title, "datasource": DATASOURCE, "gridPos": grid,
        "targets": [{"refId": "A", "datasource": DATASOURCE, "expr": expr,
                     "legendFormat": "{{node}} NPU {{id}}" + legend}],
        "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
                        "overrides": []},
    }


def _above(limit: int) -> list[dict[str, Any]]:
    return [{"color": "green", "value": None}, {"color": "red", "value": limit}]


def _prefailure_panels(sel: str) -> list[dict[str, Any]]:
    """What comes before a chip fails, as the `prefailure_alerts` read it (one panel per alert family)."""
    ecc = "npu_chip_info_hbm_ecc_"
    link: list[dict[str, Any]] = [{"color": "orange", "value": None}, {"color": "red", "value": 0},
                                  {"color": "green", "value": 1}, {"color": "orange", "value": 2}]
    return [
        _panel(6, "HBM double-bit ECC errors (lifetime)", f"{ecc}total_double_bit_error_cnt{{{sel}}}", "none",
               {"x": 0, "y": 22, "w": 8, "h": 8}, thresholds=_above(1)),
        _panel(7, "HBM single-bit ECC errors in the last hour",
               f"increase({ecc}total_single_bit_error_cnt{{{sel}}}[1h])", "none",
               {"x": 8, "y": 22, "w": 8, "h": 8}, thresholds=_above(SINGLE_BIT_ERRORS_PER_HOUR)),
        _panel(8, "HBM pages isolated (single- and double-bit)",
               f"{ecc}single_bit_isolated_pages_cnt{{{sel}}} + {ecc}double_bit_isolated_pages_cnt{{{sel}}}", "none",
               {"x": 16, "y": 22, "w": 8, "h": 8}),
        _panel(9, "Network link (1 = up, 0 = down, -1 = unknown)", f"npu_chip_info_link_status{{{sel}}}", "none",
               {"x": 0, "y": 30, "w": 12, "h": 6}, kind="stat", thresholds=link),
        _panel(10, "Network link-ups in 30 minutes (flapping)", f"increase(npu_chip_link_up_num{{{sel}}}[30m])",
               "none", {"x": 12, "y": 30, "w": 12, "h": 6}, thresholds=_above(LINK_UPS_PER_HALF_HOUR)),
        _panel(11, "RoCE and MAC errors in 10 minutes", roce_errors(sel, "10m"), "none",
               {"x": 0, "y": 36, "w": 12, "h": 8}, thresholds=_above(1), legend=" {{counter}}"),
        _panel(12, "HCCS CRC errors in 10 minutes", hccs_crc_errors(sel, "10m"), "none",
               {"x": 12, "y": 36, "w": 12, "h": 8}, thresholds=_above(1), legend=" HCCS link {{link}}"),
        # Written only while a chip has an error code (see prefailure_alerts); no data here means none.
        _panel(13, "First error code (decimal; no data: none)", f"npu_chip_info_error_code{{{sel}}}", "none",
               {"x": 0, "y": 44, "w": 24, "h": 6}, kind="stat", thresholds=_above(1)),
    ]


def dashboard(values: dict[str, Any]) -> dict[str, Any]:
    """Health, AICore utilisation, temperature and memory use (HBM, or DDR without it) per NPU, by node; then
    what comes before a chip fails: HBM ECC, network links, RoCE, HCCS and error codes."""
    job, alerts = values["monitoring"]["jobName"], values["monitoring"]["alerts"]
    sel = f'job="{job}", node=~"$node"'
    unhealthy = [{"color": "red", "value": None}, {"color": "green", "value": 1}, {"color": "red", "value": 2}]
    hot = [{"color": "green", "value": None}, {"color": "red", "value": alerts["temperatureCelsius"]}]
    full = [{"color": "green", "value": None}, {"color": "red", "value": alerts["hbmUsedPercent"]}]
    health = _panel(1, "NPU health (1 = healthy)", f"npu_chip_info_health_status{{{sel}}}", "none",
                    {"x": 0, "y": 0, "w": 24, "h": 6}, kind="stat", thresholds=unhealthy)
    return {
        "uid": "ascend-npu", "title": f"Ascend NPUs ({values['clusterName']})", "schemaVersion": 39,
        "tags": ["ascend", "npu"], "timezone": "browser", "refresh": "30s", "editable": False,
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
            {"name": "node", "type": "query", "datasource": DATASOURCE, "label": "Node", "multi": True,
             "includeAll": True, "refresh": 2, "query": f'label_values(machine_npu_nums{{job="{job}"}}, node)'},
        ]},
        "panels": [
            health,
            _panel(2, "AICore utilisation", f"npu_chip_info_utilization{{{sel}}}", "percent",
                   {"x": 0, "y": 6, "w": 12, "h": 8}),
            _panel(3, "Temperature", f"npu_chip_info_temperature{{{sel}}}", "celsius",
                   {"x": 12, "y": 6, "w": 12, "h": 8}, thresholds=hot),
            _panel(4, "HBM used", f"100 * npu_chip_info_hbm_used_memory{{{sel}}} / "
                                  f"(npu_chip_info_hbm_total_memory{{{sel}}} > 0)", "percent",
                   {"x": 0, "y": 14, "w": 12, "h": 8}, thresholds=full),
            # Chips without HBM (310P at v26.1.0) write only their memory use; see the AscendNpuMemoryNearlyFull alert.
            _panel(5, "Memory used (chips without HBM)",
                   f"100 * npu_chip_info_used_memory{{{sel}}} / (npu_chip_info_total_memory{{{sel}}} > 0) "
                   f"unless on (node, id) (npu_chip_info_hbm_total_memory{{{sel}}} > 0)", "percent",
                   {"x": 12, "y": 14, "w": 12, "h": 8}, thresholds=full),
            *_prefailure_panels(sel),
        ],
    }


def build_dashboard_config_map(values: dict[str, Any]) -> dict[str, Any]:
    """The dashboard in Prometheus' namespace, labelled `grafana_dashboard: "1"` for the sidecar."""
    meta = metadata(values, "ascend-npu-dashboard", "monitoring", APP, image_version(values["exporter"]["image"]),
                    values["monitoring"]["prometheusNamespace"], labels={"grafana_dashboard": "1"})
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {DASHBOARD_KEY: json.dumps(dashboard(values), indent=1, sort_keys=True)}}
