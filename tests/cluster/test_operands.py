"""The operand registry: its checks, and a third node agent added with one entry and nothing else."""
from __future__ import annotations

import pytest

from components.cluster import operands
from components.cluster.all_objects import cluster_objects
from components.cluster.common.node_labels import CHIP
from components.cluster.operands import (
    CANARY,
    OWN_RBAC,
    PRIORITY_CLASS,
    REGISTRY,
    Operand,
    Registry,
    always,
    registry_problems,
    switch,
)

from . import example_agent
from .test_component import COMPONENT, record

EXAMPLE = Operand("example-agent", switch("exporter", "enabled"), example_agent.build_example_service_account,
                  example_agent.build_example_rbac, example_agent.build_example_daemonsets,
                  waits=(OWN_RBAC, PRIORITY_CLASS), key=CHIP, output="exampleAgents")


@pytest.fixture
def with_example_agent(monkeypatch):
    """The project's registry with one more entry: the made-up agent."""
    monkeypatch.setattr(operands, "REGISTRY", REGISTRY.with_operand(EXAMPLE))


def names(objs: list[dict]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objs]


def test_the_project_registry_is_consistent():
    assert registry_problems(REGISTRY) == []
    outputs = [op.output for op in REGISTRY.operands if op.output]
    assert outputs[:3] == ["devicePlugins", "exporters", "validationJobs"]


@pytest.mark.parametrize("operand, problem", [
    (Operand("exporter", always), "'exporter' is registered twice"),
    (Operand("late", always, waits=("later",), key=CHIP), "'late' waits for 'later', which is no earlier operand"),
    (Operand("canary", always, waits=(CANARY,), key=CHIP), "'canary' waits for a canary it does not name"),
    (Operand("unkeyed", always, output="unkeyed"), "'unkeyed' keys no workloads"),
    (Operand("again", always, key=CHIP, output="exporters"), "output 'exporters' is registered twice"),
])
def test_an_inconsistent_registry_is_refused(operand, problem):
    with pytest.raises(ValueError, match=problem):
        REGISTRY.with_operand(operand)


def test_the_namespace_comes_first():
    with pytest.raises(ValueError, match="the Namespace must come first"):
        Registry(REGISTRY.shared[1:], REGISTRY.operands)


def test_a_third_agent_is_built_from_its_entry(with_example_agent, values):
    before = cluster_objects(values["prod"], REGISTRY)
    after = cluster_objects(values["prod"])
    added = [o for o in after if o["metadata"]["labels"]["app.kubernetes.io/component"] == "example-agent"]
    assert names(added) == [("ServiceAccount", "example-agent"), ("ClusterRole", "example-agent"),
                            ("ClusterRoleBinding", "example-agent"), ("DaemonSet", "example-agent-910b"),
                            ("DaemonSet", "example-agent-310p")]
    assert [o for o in after if o not in added] == before
    first_workload = min(i for i, o in enumerate(after) if o["kind"] in ("DaemonSet", "Job"))
    assert all(after.index(o) < first_workload for o in added[:3])
    assert not [o for o in cluster_objects(values["prod-exporter-off"]) if o["metadata"]["name"] == "example-agent"]


def test_the_component_wires_a_third_agent_from_its_entry(with_example_agent):
    graph = record("prod")
    agents = [ds for ds in graph.kind("DaemonSet") if ds.properties["metadata"]["name"].startswith("example-agent-")]
    own = {graph.named(kind, "example-agent").urn for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding")}
    priority = graph.kind("PriorityClass")[0].urn
    nodes = {r.urn for r in graph.kind("NodePatch") + graph.kind("Command")}
    assert len(agents) == 2
    for ds in agents:
        assert own | {priority} <= graph.deps(ds) and not graph.deps(ds) & nodes
        assert ds.name == f"prod-ascend-daemonset-{ds.properties['metadata']['name']}"
    component = next(r for r in graph.all if r.type == COMPONENT)
    assert component.outputs["exampleAgents"] == {"910B": "example-agent-910b", "310P": "example-agent-310p"}
    registered = {op.output for op in REGISTRY.operands if op.output}
    assert set(component.outputs) == {"namespace", "nodeLabels", "images", "exampleAgents"} | registered
