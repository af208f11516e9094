"""The pack's list of node agents (policies/npu-agents.yaml) agrees with what the program and its chart run."""
from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from typing import Any

import helm_python
import pytest
import yaml
from google.protobuf import json_format

from components.chart.writer import CHART_DIR
from components.cluster.all_objects import cluster_objects
from components.cluster.values_contract import chart_values, default_values
from tests.cluster.stacks import VARIANTS, spec_of
from tests.policies.test_rules import as_recorded
from tests.stacks import ROOT

AGENTS = yaml.safe_load((ROOT / "policies" / "npu-agents.yaml").read_text())["agents"]
CHIPS, ENGINES = ["910", "910B", "310", "310P"], ["containerd", "docker"]


def every_configuration() -> list[dict[str, Any]]:
    """The values of every stack variant, and every chip with every engine, Volcano mode on and off."""
    configurations = [chart_values(spec_of(build())) for build in VARIANTS.values()]
    for volcano, digest in itertools.product((False, True), (None, "sha256:" + "4e" * 32)):
        values = copy.deepcopy(default_values())
        values["devicePlugin"].update(chips=CHIPS, volcano=volcano)
        values["exporter"]["containerRuntimes"] = values["devicePlugin"]["containerRuntimes"] = ENGINES
        values["devicePlugin"]["image"]["digest"] = digest
        configurations.append(values)
    return configurations


def pod_template(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["jobTemplate"]["spec"]["template"] if obj["kind"] == "CronJob" else obj["spec"]["template"]


def host_paths(obj: dict[str, Any]) -> set[str]:
    if obj["kind"] not in ("DaemonSet", "Deployment", "StatefulSet", "Job", "CronJob"):
        return set()
    return {v["hostPath"]["path"] for v in pod_template(obj)["spec"].get("volumes", []) if "hostPath" in v}


def agent_of(obj: dict[str, Any]) -> str:
    labels = pod_template(obj)["metadata"]["labels"]
    [role] = [a["role"] for a in AGENTS if all(labels.get(k) == v for k, v in a["labels"].items())]
    return role


def test_each_agents_host_paths_are_exactly_what_the_program_mounts():
    mounted: dict[str, set[str]] = defaultdict(set)
    for values in every_configuration():
        for obj in cluster_objects(values):
            paths = host_paths(obj)
            if paths:
                assert obj["metadata"]["namespace"] == values["namespace"], obj["metadata"]["name"]
                mounted[agent_of(obj)] |= paths
    listed = {a["role"]: set(a["hostPaths"]) for a in AGENTS}
    for role in listed:
        unlisted, unused = sorted(mounted[role] - listed[role]), sorted(listed[role] - mounted[role])
        assert not unlisted, f"{role} mounts {unlisted}, which npu-agents.yaml does not list; add them, citing the " \
                             "release that needs them"
        assert not unused, f"npu-agents.yaml lists {unused} for {role}, which the program no longer mounts"
    assert set(mounted) == set(listed)


def test_only_the_agents_run_privileged_and_they_may():
    privileged = {agent_of(obj) for values in every_configuration() for obj in cluster_objects(values)
                  if obj["kind"] == "DaemonSet" and any(c.get("securityContext", {}).get("privileged")
                                                        for c in pod_template(obj)["spec"]["containers"])}
    assert privileged == {a["role"] for a in AGENTS if a["privileged"]}


def test_default_agent_namespace_is_the_stacks_default(pack):
    [policy] = [p for p in pack.info().policies if p.name == "node-privilege"]
    schema = json_format.MessageToDict(policy.configSchema.properties)
    assert schema["agentNamespaces"]["default"] == [default_values()["namespace"]]


@pytest.fixture(scope="module")
def rendered_by_helm() -> list[dict[str, Any]]:
    """Every object of the chart for all chips and engines, rendered by the Helm engine."""
    values = {"devicePlugin": {"chips": CHIPS}, "exporter": {"containerRuntimes": ENGINES}}
    with helm_python.Chart.load(CHART_DIR) as chart:
        texts = chart.render(values, name="ascend-npu", namespace="kube-system")
    return [doc for name, text in texts.items() if not name.endswith("NOTES.txt")
            for doc in yaml.safe_load_all(text) if doc]


def as_resource(obj: dict[str, Any]) -> Any:
    """A rendered object as a `helm.sh/v4:Chart` registers it: one resource of its own type."""
    version = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
    return as_recorded({"type": f"kubernetes:{version}:{obj['kind']}", "name": obj["metadata"]["name"],
                        "properties": obj})


def test_the_helm_rendered_chart_breaks_no_mandatory_rule(pack, rendered_by_helm):
    assert len([o for o in rendered_by_helm if o["kind"] == "DaemonSet"]) == len(CHIPS) + len(ENGINES)
    resources = [as_resource(obj) for obj in rendered_by_helm]
    diagnostics = [d for r in resources for d in pack.analyze(r, {})] + pack.analyze_stack(resources, {})
    assert [d.message for d in diagnostics if d.level == "mandatory"] == []


def test_a_helm_rendered_agent_outside_its_namespace_is_refused(pack, rendered_by_helm):
    moved = copy.deepcopy(next(o for o in rendered_by_helm if o["kind"] == "DaemonSet"))
    moved["metadata"]["namespace"] = "default"
    assert [d for d in pack.analyze(as_resource(moved), {}) if d.policy == "node-privilege"]
