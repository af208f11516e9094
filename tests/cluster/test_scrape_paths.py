"""One scrape path per setup, and on each the exporter's own labels reach Prometheus as the exporter wrote them."""
from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from components.cluster.monitoring.scrape import SCRAPE_KEY
from tests.release_checks import exporter_labels

from .prometheus_targets import operator_rules, series, target
from .stacks import of_kind, one

PATHS = ["dev", "prod", "prod-operator-off", "dev-operator-on", "dev-exporter-v26"]


def scrape_target(objs: list[dict[str, Any]]) -> dict[str, str]:
    """Target labels of one exporter pod on the path the stack built."""
    monitors, secrets = of_kind(objs, "PodMonitor"), of_kind(objs, "Secret")
    assert len(monitors) + len(secrets) == 1, "exactly one of a PodMonitor and a scrape Secret"
    if monitors:
        assert not any(e.get("honorLabels") for e in monitors[0]["spec"]["podMetricsEndpoints"])
        return target("podMonitor/ns/name/0", "ascend-system", operator_rules(monitors[0]))
    job = yaml.safe_load(secrets[0]["stringData"][SCRAPE_KEY])[0]
    assert "honor_labels" not in job
    return target(job["job_name"], "ascend-system", job["relabel_configs"])


def written_series(values: dict[str, Any]) -> dict[str, str]:
    """One series carrying every label the pinned exporter writes, the workload's namespace among them."""
    return {name: f"written-{name}" for name in exporter_labels(values)}


@pytest.mark.parametrize("variant", PATHS)
def test_exporter_labels_arrive_unrenamed(objects, values, variant):
    written = written_series(values[variant])
    assert {"namespace", "pod_name", "container_name"} <= written.keys()
    stored = series(scrape_target(objects[variant]), written)
    assert not [k for k in stored if k.startswith("exported_")]
    assert {k: stored[k] for k in written} == written


@pytest.mark.parametrize("variant", PATHS)
def test_every_series_names_its_node_chip_and_job(objects, values, variant):
    labels = scrape_target(objects[variant])
    assert labels["node"] == "train-01.prod.corp.example" and labels["chip"] == "910B"
    assert labels["job"] == values[variant]["monitoring"]["jobName"]
    assert labels["exporter_namespace"] == "ascend-system"


def test_both_paths_label_alike(objects):
    assert scrape_target(objects["prod"]) == scrape_target(objects["prod-operator-off"])


def test_without_dropping_the_operators_target_labels_the_workload_namespace_is_renamed(objects, values):
    """What the PodMonitor's first relabeling prevents (the operator's own `namespace` target label)."""
    monitor = copy.deepcopy(one(objects["prod"], "PodMonitor"))
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    endpoint["relabelings"] = [r for r in endpoint["relabelings"] if r.get("action") != "labeldrop"]
    labels = target("podMonitor/ns/name/0", "ascend-system", operator_rules(monitor))
    stored = series(labels, written_series(values["prod"]))
    assert stored["exported_namespace"] == "written-namespace" and stored["namespace"] == "ascend-system"


def test_operator_objects_carry_the_selector_labels(objects, specs):
    wanted = specs["prod"].monitoring.extra_labels
    assert wanted == {"release": "kube-prometheus-stack"}
    for kind in ("PodMonitor", "PrometheusRule"):
        assert wanted.items() <= one(objects["prod"], kind)["metadata"]["labels"].items()
