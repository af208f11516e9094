"""Scrape job, PodMonitor and dashboard agree with the exporter they watch."""
from __future__ import annotations

import json

import pytest
import yaml

from components.cluster.monitoring.grafana_dashboard import DASHBOARD_KEY
from components.cluster.monitoring.prefailure_alerts import prefailure_rule_groups
from components.cluster.monitoring.scrape import SCRAPE_KEY
from tests.release_checks import metrics_in

from .promtool_rules import needs_promtool, promtool
from .stacks import VARIANTS, of_kind, one

EXPORTER_METRICS = {"npu_chip_info_health_status", "npu_chip_info_utilization", "npu_chip_info_temperature",
                    "npu_chip_info_hbm_used_memory", "npu_chip_info_hbm_total_memory", "machine_npu_nums"}


def exporter_pods(objs: list[dict]) -> list[dict]:
    return [ds["spec"]["template"] for ds in of_kind(objs, "DaemonSet")
            if ds["metadata"]["labels"]["app.kubernetes.io/component"] == "exporter"]


def test_scrape_job_keeps_exporter_pods_and_labels_node_and_chip(objects):
    secret = one(objects["prod-operator-off"], "Secret")
    assert secret["metadata"]["namespace"] == "monitoring"
    jobs = yaml.safe_load(secret["stringData"][SCRAPE_KEY])
    assert len(jobs) == 1 and jobs[0]["job_name"] == "ascend-npu-exporter"
    job = jobs[0]
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["ascend-system"]},
                                             "attach_metadata": {"node": True}}]
    keeps = {r["source_labels"][0]: r["regex"] for r in job["relabel_configs"] if r.get("action") == "keep"}
    for pod in exporter_pods(objects["prod-operator-off"]):
        assert keeps["__meta_kubernetes_pod_label_app_kubernetes_io_name"] == pod["metadata"]["labels"][
            "app.kubernetes.io/name"]
        ports = {p["name"] for p in pod["spec"]["containers"][0]["ports"]}
        assert keeps["__meta_kubernetes_pod_container_port_name"] in ports
    targets = {r["target_label"]: r["source_labels"][0] for r in job["relabel_configs"] if "target_label" in r}
    assert targets["node"] == "__meta_kubernetes_pod_node_name"
    # Prometheus writes the node label `ascend-npu.io/chip` with underscores.
    assert targets["chip"] == "__meta_kubernetes_node_label_ascend_npu_io_chip"


def test_pod_monitor_matches_the_exporter_and_the_alerts_job(objects):
    objs = objects["prod"]
    monitor = one(objs, "PodMonitor")
    for pod in exporter_pods(objs):
        assert monitor["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        ports = {p["name"] for p in pod["spec"]["containers"][0]["ports"]}
        assert monitor["spec"]["podMetricsEndpoints"][0]["port"] in ports
    job = next(r["replacement"] for r in monitor["spec"]["podMetricsEndpoints"][0]["relabelings"]
               if r.get("targetLabel") == "job")
    rules = [rule for group in one(objs, "PrometheusRule")["spec"]["groups"] for rule in group["rules"]]
    assert len(rules) > 6 and all(f'job="{job}"' in r["expr"] for r in rules)


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "prod-exporter-off"])
def test_operator_kinds_only_with_the_operator(objects, specs, variant):
    kinds = [o["kind"] for o in objects[variant]]
    operator = specs[variant].monitoring.prometheus_operator
    assert ("PodMonitor" in kinds) is operator and ("PrometheusRule" in kinds) is operator
    rule_maps = [c for c in of_kind(objects[variant], "ConfigMap") if c["metadata"]["name"] == "ascend-npu-alerts"]
    assert bool(rule_maps) is not operator


def board(objs: list[dict]) -> dict:
    return json.loads(one(objs, "ConfigMap", "ascend-npu-dashboard")["data"][DASHBOARD_KEY])


def test_dashboard_panels(objects):
    config_map = one(objects["prod"], "ConfigMap", "ascend-npu-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = board(objects["prod"])
    titles = " | ".join(p["title"] for p in dashboard["panels"])
    for word in ("health", "AICore", "Temperature", "HBM", "ECC", "link", "RoCE", "HCCS", "error code"):
        assert word in titles
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            metrics = {m for m in EXPORTER_METRICS if m in target["expr"]} or metrics_in(target["expr"])
            assert metrics, f"{panel['title']} reads no exporter metric"
            assert 'job="ascend-npu-exporter"' in target["expr"] and 'node=~"$node"' in target["expr"]


def test_every_prefailure_alert_has_its_metrics_on_the_dashboard(objects, values):
    """Each alert on what comes before a chip fails reads metrics a panel shows too."""
    shown = set().union(*(metrics_in(t["expr"]) for p in board(objects["prod"])["panels"] for t in p["targets"]))
    for group in prefailure_rule_groups(values["prod"]):
        for rule in group["rules"]:
            assert metrics_in(rule["expr"]) & shown, f"{rule['alert']} has no panel"


def test_dashboard_panels_lie_side_by_side_without_overlap(objects):
    cells = [(p["title"], x, y) for p in board(objects["prod"])["panels"]
             for x in range(p["gridPos"]["x"], p["gridPos"]["x"] + p["gridPos"]["w"])
             for y in range(p["gridPos"]["y"], p["gridPos"]["y"] + p["gridPos"]["h"])]
    assert all(x < 24 for _, x, _ in cells)
    assert len({(x, y) for _, x, y in cells}) == len(cells), "two panels share a cell"


@needs_promtool
def test_every_dashboard_query_is_valid_promql(objects, tmp_path):
    """promtool parses each panel's query as a recording rule (Grafana's `$node` is a plain string in a regex)."""
    panels = board(objects["prod"])["panels"]
    rules = [{"record": f"panel:{p['id']}:{t['refId']}", "expr": t["expr"]} for p in panels for t in p["targets"]]
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout


def test_dashboard_can_be_left_out(objects):
    assert not [c for c in of_kind(objects["prod-operator-off"], "ConfigMap")
                if "grafana_dashboard" in c["metadata"]["labels"]]
