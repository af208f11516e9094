"""AscendCluster under Pulumi's mocks: typed resources, the builders' objects, and the edges that order them."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from components.cluster.all_objects import cluster_objects
from components.cluster.common.node_labels import node_labels
from components.cluster.component import _check_node
from components.cluster.operands import REGISTRY
from components.cluster.values_contract import chart_values
from components.labels.contract import WANTED_ENV, LabelCall, parse
from components.plan.recorder import SECRET_SIG, SIG_KEY, Recorded, run_program
from components.plan.stack_files import read_stack_config
from components.plan.stack_plan import judge

from .stacks import ROOT, spec_of, stack_raw

PROGRAM = Path(__file__).with_name("cluster_program.py")
COMPONENT = "ascend-npu:index:AscendCluster"
RBAC = ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "PriorityClass")


class Graph:
    """The recorded resources of one run, looked up by kind, Kubernetes name and dependency."""

    def __init__(self, recorded: list[Recorded]):
        self.all = recorded
        self.by_urn = {r.urn: r for r in recorded}

    def kind(self, kind: str) -> list[Recorded]:
        return [r for r in self.all if r.type.rsplit(":", 1)[-1] == kind]

    def named(self, kind: str, name: str) -> Recorded:
        return next(r for r in self.kind(kind) if r.properties["metadata"]["name"] == name)

    def deps(self, resource: Recorded) -> set[str]:
        return set(resource.dependencies)

    def label_steps(self) -> dict[str, tuple[Recorded, LabelCall]]:
        """Each node's label step (a local command of components/labels) and the call its create makes."""
        steps = {}
        for r in self.all:
            if r.type == "command:local:Command" and WANTED_ENV in (r.properties.get("environment") or {}):
                words = shlex.split(r.properties["create"])
                call = parse(words[words.index("components.labels") + 1:], r.properties["environment"])
                steps[call.node] = (r, call)
        return steps


def record(stack: str, sections: dict[str, Any] | None = None, extra: dict[str, str] | None = None) -> Graph:
    config = read_stack_config(ROOT, stack)
    values = dict(config.values)
    for key, section in (sections or {}).items():
        current = json.loads(values.get(f"ascend-npu:{key}", "{}"))
        values[f"ascend-npu:{key}"] = json.dumps({**current, **section})
    return Graph(run_program(PROGRAM, config.project, stack, {**values, **(extra or {})}, config.secret_keys))


@pytest.fixture(scope="module")
def prod() -> Graph:
    return record("prod")


@pytest.fixture(scope="module")
def dev() -> Graph:
    return record("dev")


def plain(value: Any) -> Any:
    """Wire values as JSON would hold them: secrets unwrapped, integral floats (protobuf numbers) back to ints."""
    if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG:
        return plain(value["value"])
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def test_registers_the_builders_objects_as_typed_resources(prod):
    objs = cluster_objects(chart_values(spec_of(stack_raw("prod"))))
    registered = {(r.type, r.properties["metadata"].get("namespace"), r.properties["metadata"]["name"]): r
                  for r in prod.all if r.type.startswith("kubernetes:")}
    assert len(registered) == len(objs)
    for obj in objs:
        group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
        resource = registered[(f"kubernetes:{group}:{obj['kind']}", obj["metadata"].get("namespace"),
                               obj["metadata"]["name"])]
        assert plain(resource.properties) == obj, f"{obj['kind']}/{obj['metadata']['name']}"


def test_children_of_one_component(prod):
    component = next(r for r in prod.all if r.type == COMPONENT)
    assert component.name == "prod-ascend"
    children = [r for r in prod.all if r.type.startswith("kubernetes:")]
    assert children and all(r.parent == component.urn and r.name.startswith("prod-ascend-") for r in children)
    registered = {op.output for op in REGISTRY.operands if op.output}
    assert {"devicePlugins", "exporters", "validationJobs"} <= registered
    assert set(component.outputs) == {"namespace", "nodeLabels", "images"} | registered  # images: prod's registry
    assert set(component.outputs["validationJobs"]) == {"910B", "310P"}


def test_rbac_before_each_daemonset(prod):
    rbac = [r for r in prod.all if r.type.rsplit(":", 1)[-1] in RBAC]
    for ds in prod.kind("DaemonSet"):
        component = ds.properties["metadata"]["labels"]["app.kubernetes.io/component"]
        pod = ds.properties["spec"]["template"]["spec"]
        own = {r.urn for r in rbac if r.properties["metadata"]["labels"]["app.kubernetes.io/component"] == component}
        assert own and own <= prod.deps(ds)
        assert prod.named("ServiceAccount", pod["serviceAccountName"]).urn in prod.deps(ds)
        if pod["priorityClassName"] != "system-node-critical":
            assert prod.named("PriorityClass", pod["priorityClassName"]).urn in prod.deps(ds)


def test_each_node_is_labelled_after_its_own_host_steps_only(prod):
    commands = {r.urn: r.name for r in prod.kind("Command")}
    steps = prod.label_steps()
    assert len(steps) == 34
    spec = spec_of(stack_raw("prod"))
    for node, (step, call) in steps.items():
        assert {commands[u] for u in prod.deps(step) if u in commands} == {f"{node}-driver", f"{node}-runtime"}
        assert call.labels == node_labels(spec.node(node), spec.versions) and call.taints is None
        assert call.context == spec.cluster.kube_context
        assert step.name == f"prod-ascend-node-{node}" and step.properties["delete"] == call.released().command()
        assert step.parent == next(r for r in prod.all if r.type == COMPONENT).urn


def test_nodes_join_one_by_one(prod):
    held = {r.urn for r in prod.kind("Command")}
    for ds in prod.kind("DaemonSet"):
        assert not prod.deps(ds) & held, f"{ds.name} waits for nodes"


def test_each_chips_validation_job_after_its_plugin_runtime_class_and_canary(prod):
    jobs = prod.kind("Job")
    plugins = {r.properties["metadata"]["labels"]["ascend-npu.io/chip"]: r.urn for r in prod.kind("DaemonSet")
               if r.properties["metadata"]["labels"]["app.kubernetes.io/component"] == "device-plugin"}
    patches = {node: step.urn for node, (step, _) in prod.label_steps().items()}
    canaries = {}
    for job in jobs:
        chip = job.properties["metadata"]["labels"]["ascend-npu.io/chip"]
        canaries[chip] = job.properties["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.io/hostname"]
        assert plugins[chip] in prod.deps(job) and not (set(plugins.values()) - {plugins[chip]}) & prod.deps(job)
        assert prod.kind("RuntimeClass")[0].urn in prod.deps(job)
        assert patches[canaries[chip]] in prod.deps(job)
        assert not (set(patches.values()) - {patches[canaries[chip]]}) & prod.deps(job)
        assert prod.named("ServiceAccount", "ascend-npu-validation").urn in prod.deps(job)
        assert job.name == f"prod-ascend-job-validation-{chip.lower()}"
    assert canaries == {"910B": "train-01.prod.corp.example", "310P": "infer-01.prod.corp.example"}


def test_custom_resources_with_the_operator(prod, dev):
    kinds = {r.type for r in prod.all}
    assert {"kubernetes:monitoring.coreos.com/v1:PodMonitor",
            "kubernetes:monitoring.coreos.com/v1:PrometheusRule"} <= kinds
    assert not any("monitoring.coreos.com" in r.type for r in dev.all)


def test_default_runtime_stack_job_without_runtime_class():
    graph = record("dev", {"cluster": {"ascendDefaultRuntime": True}})
    (job,) = graph.kind("Job")
    assert not graph.kind("RuntimeClass")
    assert graph.label_steps()["dev-npu-01"][0].urn in graph.deps(job)


def test_optional_taint_lands_with_the_labels():
    graph = record("dev", extra={"cluster-test:taintNodes": "true"})
    steps = graph.label_steps()
    assert len(steps) == 2
    for _, call in steps.values():
        assert call.taints == [{"key": "huawei.com/Ascend910", "value": "present", "effect": "NoSchedule"}]
        assert call.body()["spec"] == {"taints": call.taints}


def test_only_nodes_of_the_spec_are_labelled_and_each_once():
    nodes = {n.name: n for n in spec_of(stack_raw("dev")).nodes}
    assert _check_node(nodes, "dev-npu-02", {"dev-npu-01": object()}).name == "dev-npu-02"
    with pytest.raises(ValueError, match="'dev-npu-03': not a node of the spec \\(dev-npu-01, dev-npu-02\\)"):
        _check_node(nodes, "dev-npu-03", {})
    with pytest.raises(ValueError, match="cannot label 'dev-npu-01' twice"):
        _check_node(nodes, "dev-npu-01", {"dev-npu-01": object()})


def test_a_canary_labelled_after_construction_still_gets_the_validation_job():
    graph = Graph(run_program(Path(__file__).with_name("cluster_program.py"), "ascend-npu", "dev",
                              {**read_stack_config(ROOT, "dev").values, "cluster-test:labelLater": "true"},
                              read_stack_config(ROOT, "dev").secret_keys))
    (job,) = graph.kind("Job")
    assert graph.label_steps()["dev-npu-01"][0].urn in graph.deps(job)
    assert len(graph.label_steps()) == 2


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_policy_pack_passes_the_cluster_layer(stack, dev, prod):
    report = judge({"dev": dev, "prod": prod}[stack].all, ROOT / "policies")
    assert report["violations"] == [], json.dumps(report["violations"], indent=1)


def test_a_validation_job_waits_for_every_plugin_of_its_chip():
    """v26.1.0 on prod: each chip's plugin has a DaemonSet for Docker nodes too (the 310P canary is one)."""
    graph = record("prod", {"devicePlugin": {"image": {
        "repository": "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin", "tag": "v26.1.0"}}})
    component = next(r for r in graph.all if r.type == COMPONENT)
    assert component.outputs["devicePlugins"] == {
        "910B": "ascend-device-plugin-910b", "910B/docker": "ascend-device-plugin-910b-docker",
        "310P": "ascend-device-plugin-310p", "310P/docker": "ascend-device-plugin-310p-docker"}
    plugins = [r for r in graph.kind("DaemonSet")
               if r.properties["metadata"]["labels"]["app.kubernetes.io/component"] == "device-plugin"]
    for job in graph.kind("Job"):
        chip = job.properties["metadata"]["labels"]["ascend-npu.io/chip"]
        mine = {r.urn for r in plugins if r.properties["metadata"]["labels"]["ascend-npu.io/chip"] == chip}
        assert len(mine) == 2 and {r.urn for r in plugins} & graph.deps(job) == mine
