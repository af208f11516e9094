"""The chart renders exactly the objects the Pulumi program registers for the same values."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from components.chart.writer import HELPERS
from components.cluster.all_objects import cluster_objects
from components.cluster.values_contract import default_values
from components.plan.stack_files import read_stack_config
from components.plan.stack_plan import stack_chart_values
from tests.stacks import ROOT

from ..cluster.stacks import VARIANTS
from .rendering import HELM_ONLY_LABEL, MANAGED_BY, as_values_file, key, render, replacing_maps, without_release_labels

DIGEST = "sha256:" + "ab" * 32


def assert_same_objects(chart, values: dict[str, Any], helm_values: dict[str, Any] | None = None) -> None:
    """Rendered with `helm_values` (default: `values` as a values file) equals `cluster_objects(values)`."""
    expected = {key(o): without_release_labels(o, values["managedBy"]) for o in cluster_objects(values)}
    helm_values = as_values_file(values) if helm_values is None else helm_values
    rendered = {k: without_release_labels(o, "Helm") for k, o in render(chart, helm_values).items()}
    assert sorted(rendered) == sorted(expected)
    for name, obj in expected.items():
        assert rendered[name] == obj, \
            f"{name}:\n{json.dumps(obj, indent=1)}\n!=\n{json.dumps(rendered[name], indent=1)}"


def changed(values: dict[str, Any], **paths: Any) -> dict[str, Any]:
    """A copy of `values` with `a__b=value` set at `a.b`."""
    result = copy.deepcopy(values)
    for path, value in paths.items():
        *parents, last = path.split("__")
        node = result
        for part in parents:
            node = node[part]
        node[last] = value
    return result


def test_default_values_render_the_objects_of_the_defaults(chart):
    assert_same_objects(chart, default_values(), helm_values={})


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_stack_renders_the_objects_the_pulumi_program_registers(chart, stack_values, variant):
    assert_same_objects(chart, stack_values[variant])


def test_only_helm_release_labels_differ(chart, stack_values):
    dev = stack_values["dev"]
    rendered = render(chart, as_values_file(dev))
    for obj in cluster_objects(dev):
        labels = rendered[key(obj)]["metadata"]["labels"]
        assert labels[MANAGED_BY] == "Helm" and obj["metadata"]["labels"][MANAGED_BY] == "pulumi"
        assert labels[HELM_ONLY_LABEL] == f"{chart.name}-{chart.version}"
        assert HELM_ONLY_LABEL not in obj["metadata"]["labels"]


@pytest.mark.parametrize("namespace", ["123", "true", "on", "null", "0x1f", "0777", "0b101", "2024-01-05", "1e3",
                                       "yes-please", "npu-agents"])
def test_values_yaml_would_read_as_another_type_are_quoted_as_the_builders_quote_them(chart, stack_values, namespace):
    # Passed as data: PyYAML writes `1e3` plain, which Go's YAML would read back as a number.
    values = changed(stack_values["prod-operator-off"], namespace=namespace, monitoring__jobName=namespace)
    assert_same_objects(chart, values, helm_values=values)


def test_longest_names_and_extreme_thresholds(chart, stack_values):
    for operator in (False, True):
        assert_same_objects(chart, changed(stack_values["prod"], clusterName="c" * 63, monitoring__jobName="j" * 40,
                                           monitoring__prometheusOperator=operator,
                                           monitoring__alerts={"temperatureCelsius": 120, "hbmUsedPercent": 100}))
        assert_same_objects(chart, changed(stack_values["prod"], monitoring__prometheusOperator=operator,
                                           monitoring__alerts={"temperatureCelsius": 40, "hbmUsedPercent": 50}))


def test_user_labels_selectors_and_tolerations_win_where_the_builders_let_them(chart, stack_values):
    values = changed(stack_values["prod"],
                     nodeSelector={"ascend-npu.io/ready": "false", "accelerator": "other", "pool": "train"},
                     tolerations=[{"key": "dedicated", "operator": "Exists"},
                                  {"key": "b", "operator": "Equal", "value": "c", "effect": "NoExecute",
                                   "tolerationSeconds": 30}],
                     monitoring__extraLabels={"release": "kps", "app.kubernetes.io/name": "mine"},
                     monitoring__prometheusPodLabels={"app": "prometheus", "team": "platform"})
    assert_same_objects(chart, values, replacing_maps(as_values_file(values), default_values()))


def test_images_by_digest_only_and_every_dashboard_subject(chart, stack_values):
    assert_same_objects(chart, changed(
        stack_values["prod"],
        exporter__image={"repository": "registry.example.com/npu-exporter", "tag": None, "digest": DIGEST,
                         "pullPolicy": "Never"},
        validation__jobs__310P__image={"repository": "registry.example.com/cann", "tag": None, "digest": DIGEST,
                                       "pullPolicy": "Always"},
        dashboardAccess={"enabled": True, "group": "ops", "serviceAccount": "dash", "dashboardNamespace": "dash"}))
    assert_same_objects(chart, changed(
        stack_values["dev"], devicePlugin__chips=["310", "910", "910B", "310P"],
        validation__jobs={chip: {"node": f"npu-{chip.lower()}", "image": {
            "repository": "registry.example.com/cann", "tag": f"8.0.rc3-{chip.lower()}", "digest": None,
            "pullPolicy": "IfNotPresent"}} for chip in ("310", "910", "910B", "310P")},
        priorityClass={"name": "npu-agents", "value": -5}, validation__backoffLimit=0,
        dashboardAccess={"enabled": True, "group": None, "serviceAccount": "dash", "dashboardNamespace": "dash"}))


def test_the_quoting_helper_decides_as_pyyaml_does():
    import re
    pattern = json.loads(re.search(r'regexMatch ("(?:[^"\\]|\\.)*") ', HELPERS.read_text()).group(1))
    labels = ["123", "0", "007", "08", "0b1", "0b2", "0x1f", "0xg", "2024-1-5", "2024-01-05-x", "true", "on",
              "off", "yes", "no", "null", "nan", "inf", "1e3", "1-2", "a1", "ascend-system", "y", "n", "10-20-30"]
    for label in labels:
        quoted = yaml.safe_dump(label).startswith("'")
        assert quoted == bool(re.match(pattern, label)), label


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_values_file_make_plan_writes_renders_the_stacks_objects(chart, stack):
    config = read_stack_config(ROOT, stack)
    exported = yaml.safe_load(yaml.safe_dump(stack_chart_values(config)))
    assert exported["managedBy"] == "Helm"
    assert_same_objects(chart, {**exported, "managedBy": "pulumi"}, helm_values=as_values_file(exported))
