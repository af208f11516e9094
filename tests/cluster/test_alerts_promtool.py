"""The alert rules pass `promtool check rules`, and fire (and stay quiet) on input series as intended."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from components.cluster.monitoring.alerts import RULES_KEY, rule_groups, rules_file
from components.cluster.monitoring.prefailure_alerts import prefailure_rule_groups
from components.cluster.values_contract import chart_values

from .promtool_rules import JOB, alert, cases_missing, chip, needs_promtool, promtool, run_rule_tests, series
from .stacks import one

pytestmark = needs_promtool


UNHEALTHY = {"summary": "An Ascend NPU reports itself unhealthy."}
HOT = {"summary": "An Ascend NPU runs hot."}
HBM = {"summary": "An Ascend NPU's HBM is nearly full."}
DOWN = {"summary": "The NPU exporter cannot be scraped."}
MEMORY = {"summary": "An Ascend NPU without HBM is nearly out of memory."}
FEWER = {"summary": "A node offers fewer NPUs to pods than it has."}

TESTS = [
    {"interval": "1m",
     "input_series": [series("npu_chip_info_health_status", f'{JOB},node="train-01",id="0"', "1x20"),
                      series("npu_chip_info_health_status", f'{JOB},node="train-01",id="1"', "1 1 0x18")],
     "alert_rule_test": [
         alert("3m", "AscendNpuChipUnhealthy"),
         alert("5m", "AscendNpuChipUnhealthy", (chip("train-01", "1", "critical"), {
             **UNHEALTHY, "description": "NPU 1 on train-01 has health status 0 (1 is healthy); check `npu-smi "
                                         "info` on the node."}))]},
    {"interval": "1m",
     "input_series": [series("npu_chip_info_temperature", f'{JOB},node="train-01",id="0"', "90x20"),
                      series("npu_chip_info_temperature", f'{JOB},node="train-01",id="1"', "84x20")],
     "alert_rule_test": [
         alert("3m", "AscendNpuTemperatureHigh"),
         alert("10m", "AscendNpuTemperatureHigh", (chip("train-01", "0", "warning"), {
             **HOT, "description": "NPU 0 on train-01 is at 90 C, above 85 C."}))]},
    {"interval": "1m",
     "input_series": [  # 94.6 % and 96.1 % of 64 GiB; a 310P chip without HBM; a total of 0 with some use
         series("npu_chip_info_hbm_used_memory", f'{JOB},node="train-01",id="0"', "62000x20"),
         series("npu_chip_info_hbm_total_memory", f'{JOB},node="train-01",id="0"', "65536x20"),
         series("npu_chip_info_hbm_used_memory", f'{JOB},node="train-01",id="1"', "63000x20"),
         series("npu_chip_info_hbm_total_memory", f'{JOB},node="train-01",id="1"', "65536x20"),
         series("npu_chip_info_hbm_used_memory", f'{JOB},node="infer-01",id="0"', "0x20"),
         series("npu_chip_info_hbm_total_memory", f'{JOB},node="infer-01",id="0"', "0x20"),
         series("npu_chip_info_hbm_used_memory", f'{JOB},node="infer-01",id="1"', "100x20"),
         series("npu_chip_info_hbm_total_memory", f'{JOB},node="infer-01",id="1"', "0x20")],
     "alert_rule_test": [
         alert("5m", "AscendNpuHbmNearlyFull"),
         alert("15m", "AscendNpuHbmNearlyFull", (chip("train-01", "1", "warning"), {
             **HBM, "description": "NPU 1 on train-01 uses 96.13% of its HBM."}))]},
    {"interval": "1m",
     "input_series": [  # v26.1.0: a 310P writes DDR use only (96 % and 50 % of 24 GiB); a 910B writes both
         series("npu_chip_info_used_memory", f'{JOB},node="infer-01",id="0"', "23600x20"),
         series("npu_chip_info_total_memory", f'{JOB},node="infer-01",id="0"', "24576x20"),
         series("npu_chip_info_used_memory", f'{JOB},node="infer-01",id="1"', "12288x20"),
         series("npu_chip_info_total_memory", f'{JOB},node="infer-01",id="1"', "24576x20"),
         series("npu_chip_info_used_memory", f'{JOB},node="train-01",id="0"', "31000x20"),
         series("npu_chip_info_total_memory", f'{JOB},node="train-01",id="0"', "32000x20"),
         series("npu_chip_info_hbm_total_memory", f'{JOB},node="train-01",id="0"', "65536x20")],
     "alert_rule_test": [
         alert("5m", "AscendNpuMemoryNearlyFull"),
         alert("15m", "AscendNpuMemoryNearlyFull", (chip("infer-01", "0", "warning"), {
             **MEMORY, "description": "NPU 0 on infer-01 uses 96.03% of its memory."}))]},
    {"interval": "1m",
     "input_series": [series("up", f'{JOB},node="train-01",instance="10.244.1.7:8082"', "1x20"),
                      series("up", f'{JOB},node="infer-01",instance="10.244.2.9:8082"', "1 0x19")],
     "alert_rule_test": [
         alert("4m", "AscendNpuExporterDown"),
         alert("10m", "AscendNpuExporterDown", (
             {"job": "ascend-npu-exporter", "node": "infer-01", "instance": "10.244.2.9:8082", "severity": "warning"},
             {**DOWN, "description": "The exporter on infer-01 has not answered for 5 minutes; its NPUs are "
                                     "unwatched."}))]},
    {"interval": "1m",
     "input_series": [  # train-01 offers all 8; train-02 only 6; infer-01's plugin never registered
         series("machine_npu_nums", f'{JOB},node="train-01"', "8x30"),
         series("kube_node_status_allocatable",
                'job="kube-state-metrics",node="train-01",resource="huawei_com_Ascend910",unit="integer"', "8x30"),
         series("machine_npu_nums", f'{JOB},node="train-02"', "8x30"),
         series("kube_node_status_allocatable",
                'job="kube-state-metrics",node="train-02",resource="huawei_com_Ascend910",unit="integer"', "6x30"),
         series("machine_npu_nums", f'{JOB},node="infer-01"', "8x30"),
         series("kube_node_status_allocatable",
                'job="kube-state-metrics",node="infer-01",resource="cpu",unit="core"', "96x30")],
     "alert_rule_test": [
         alert("10m", "AscendNpuAllocatableBelowInstalled"),
         alert("20m", "AscendNpuAllocatableBelowInstalled", *[
             ({"node": node, "severity": "warning"},
              {**FEWER, "description": f"{node} has 8 NPUs but Kubernetes can schedule fewer; check the device "
                                       "plugin pod and the NPUs' health."}) for node in ("infer-01", "train-02")])]},
]


@pytest.fixture
def rules_path(values, tmp_path) -> Path:
    path = tmp_path / "ascend-npu-rules.yaml"
    path.write_text(rules_file(values["prod"]))
    return path


def test_check_rules(rules_path, values):
    result = promtool("check", "rules", str(rules_path))
    assert result.returncode == 0, result.stdout + result.stderr
    count = sum(len(group["rules"]) for group in rule_groups(values["prod"]))
    assert count == 6 + sum(len(group["rules"]) for group in prefailure_rule_groups(values["prod"]))
    assert f"SUCCESS: {count} rules found" in result.stdout


def test_the_first_group_then_the_prefailure_groups(values):
    groups = rule_groups(values["prod"])
    assert groups[0]["name"] == "ascend-npu" and groups[1:] == prefailure_rule_groups(values["prod"])


def test_alerts_fire_and_stay_quiet_on_input_series(values, tmp_path):
    result = run_rule_tests(rules_file(values["prod"]), TESTS, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_is_tested_firing_and_quiet(values):
    assert cases_missing(rule_groups(values["prod"])[:1], TESTS) == []


def test_a_broken_expression_fails_the_check(values, tmp_path):
    groups = rule_groups(values["prod"])
    groups[0]["rules"][0]["expr"] = "npu_chip_info_health_status != "
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}))
    assert promtool("check", "rules", str(path)).returncode != 0


def test_operator_and_plain_prometheus_ship_the_same_rules(objects):
    rule = one(objects["prod"], "PrometheusRule")
    config_map = one(objects["prod-operator-off"], "ConfigMap", "ascend-npu-alerts")
    assert rule["spec"]["groups"] == yaml.safe_load(config_map["data"][RULES_KEY])["groups"]


def test_thresholds_come_from_the_stack(specs):
    spec = specs["dev"]
    alerts = spec.monitoring.alerts.model_copy(update={"temperature_celsius": 78, "hbm_used_percent": 90})
    values = chart_values(replace(spec, monitoring=spec.monitoring.model_copy(update={"alerts": alerts})))
    exprs = {r["alert"]: r["expr"] for r in rule_groups(values)[0]["rules"]}
    assert exprs["AscendNpuTemperatureHigh"].endswith("> 78")
    assert exprs["AscendNpuHbmNearlyFull"].endswith("> 90")
