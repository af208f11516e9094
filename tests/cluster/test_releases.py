"""The objects carry only what the pinned releases define: flags, metrics, labels; an upgrade is a tag change."""
from __future__ import annotations

import json
from typing import Any

import pytest

from components.cluster.monitoring.alerts import rule_groups
from components.cluster.monitoring.grafana_dashboard import DASHBOARD_KEY
from tests.release_checks import NOT_FROM_EXPORTER, exporter_metrics, flags_passed, metrics_in, undefined_flags

from .stacks import VARIANTS, one


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_flag_is_defined_by_the_pinned_release(objects, values, variant):
    assert flags_passed(objects[variant]) >= 3
    assert undefined_flags(objects[variant], values[variant]) == []


def test_a_flag_the_release_lacks_is_caught(objects, values):
    """v6.0.0 has no healthz flags: the check names them when the objects carry them."""
    v26_objects = objects["dev-plugin-v26"]
    wrong = {**values["dev-plugin-v26"], "devicePlugin": {**values["dev-plugin-v26"]["devicePlugin"],
                                                          "release": "v6.0.0"}}
    assert undefined_flags(v26_objects, wrong) == [
        "ascend-device-plugin-910b: --enable-healthz=true", "ascend-device-plugin-910b: --healthz-address=11251"]


def queried(objs: list[dict[str, Any]], values: dict[str, Any]) -> dict[str, set[str]]:
    """Metric names read by each alert rule and dashboard panel (and the node variable)."""
    found = {rule["alert"]: metrics_in(rule["expr"]) for group in rule_groups(values) for rule in group["rules"]}
    board = json.loads(one(objs, "ConfigMap", "ascend-npu-dashboard")["data"][DASHBOARD_KEY])
    found.update({panel["title"]: set().union(*(metrics_in(t["expr"]) for t in panel["targets"]))
                  for panel in board["panels"]})
    found.update({f"${v['name']}": metrics_in(v["query"]) for v in board["templating"]["list"] if v["type"] == "query"})
    return found


@pytest.mark.parametrize("variant", ["dev", "prod", "dev-exporter-v26"])
def test_alerts_and_dashboard_query_only_metrics_the_exporter_defines(objects, values, variant):
    defined = exporter_metrics(values[variant])
    for where, metrics in queried(objects[variant], values[variant]).items():
        assert metrics, f"{where} reads no metric"
        assert metrics - NOT_FROM_EXPORTER <= defined, f"{where}: {sorted(metrics - NOT_FROM_EXPORTER - defined)}"


def test_hbm_utilization_is_not_a_v6_metric(values):
    """`npu_chip_info_hbm_utilization` arrives after v6.0.0: the HBM alert divides used by total instead."""
    assert "npu_chip_info_hbm_utilization" not in exporter_metrics(values["dev"])
    assert "npu_chip_info_hbm_utilization" in exporter_metrics(values["dev-exporter-v26"])


def differences(before: Any, after: Any, path: str = "") -> list[str]:
    """Paths where two object trees differ (lists of named items matched by name)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [p for key in dict.fromkeys([*before, *after])
                for p in (differences(before.get(key), after.get(key), f"{path}.{key}")
                          if key in before and key in after else [f"{path}.{key}"])]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [p for i, (b, a) in enumerate(zip(before, after)) for p in differences(b, a, f"{path}[{i}]")]
    return [] if before == after else [path]


def test_moving_the_plugin_tag_to_v26_changes_only_what_the_release_defines(objects):
    """dev with only devicePlugin.image.tag moved from v6.0.0 to v26.1.0."""
    def by_name(objs):
        return {f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": o for o in objs}
    before, after = by_name(objects["dev"]), by_name(objects["dev-plugin-v26"])
    job = lambda objs: next(k for k in objs if k.startswith("Job/"))  # noqa: E731 - named by a hash of what it proves
    before[job(after)] = before.pop(job(before))
    assert sorted(before) == sorted(after), "no object appears or disappears"
    changed = {f"{name}{p}" for name in after for p in differences(before[name], after[name])
               if not p.endswith("app.kubernetes.io/version']") and "version" not in p.split(".")[-1]}
    plugin = "DaemonSet/ascend-system/ascend-device-plugin-910b.spec.template.spec"
    container = f"{plugin}.containers[0]"
    job_name = job(after)
    assert changed == {
        f"{plugin}.hostPID", f"{container}.image", f"{container}.args", f"{container}.env",
        f"{container}.ports", f"{container}.livenessProbe",
        # v26.1.0 writes each job's data-trace config under /user/cluster-info/datatrace-config
        f"{container}.volumeMounts", f"{plugin}.volumes",
        # its detector needs Docker's socket on Docker nodes, which get DaemonSets of their own
        f"{plugin}.nodeSelector.ascend-npu.io/container-runtime",
        "ClusterRole//ascend-npu-device-plugin.rules",
        f"{job_name}.metadata.name",
    }
