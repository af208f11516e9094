"""Stack rules against whole-stack fixtures (names state the expected count), over the analyzer protocol."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.host.targets import HOST_TYPE
from components.plan.recorder import Recorded
from tests.policies.test_rules import NAME, STACK_FIXTURES, UNKNOWN, as_recorded

CASES = sorted(STACK_FIXTURES.glob("*/*.yaml"))


def load(case: Path) -> tuple[list[dict], dict]:
    """A fixture is a list of resources, or `{config: ..., resources: [...]}`."""
    doc = yaml.safe_load(case.read_text())
    if isinstance(doc, list):
        return doc, {}
    return doc["resources"], doc.get("config", {})


def stack_diagnostics(pack, rule: str, resources: list[dict], config: dict) -> list:
    pack.configure({rule: config})
    try:
        return [d for d in pack.analyze_stack([as_recorded(r) for r in resources], {}) if d.policy == rule]
    finally:
        pack.configure({})


def test_stack_fixture_names_state_the_count():
    assert CASES, "stack rules need fixtures"
    for case in CASES:
        kind, count = NAME.match(case.stem).groups()
        assert (kind == "pass") == (count == "0"), case.name


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stack_rule_reports_the_stated_number_of_violations(pack, case: Path):
    rule, expected = case.parent.name, int(NAME.match(case.stem).group(2))
    resources, config = load(case)
    diagnostics = stack_diagnostics(pack, rule, resources, config)
    found = [d for d in diagnostics if d.level == "mandatory"]
    assert len(found) == expected, [d.message for d in found]
    assert all(d.urn.startswith("urn:pulumi:test::fixture::") for d in found), "a violation names its resource"
    skipped = [d for d in diagnostics if d not in found]
    assert all(UNKNOWN in d.message for d in skipped), "only unknowns may skip a rule"
    assert bool(skipped) == ("unknown" in case.stem), "a fixture with an unknown value says so in its name"


def test_misnamed_resource_message_lists_what_is_advertised(pack):
    resources, config = load(STACK_FIXTURES / "advertised-npu-resources" / "fail-1-ascend910b-requested.yaml")
    [violation] = stack_diagnostics(pack, "advertised-npu-resources", resources, config)
    assert "huawei.com/Ascend910B" in violation.message
    assert "(advertised: huawei.com/Ascend910" in violation.message


def test_stack_rule_is_silent_per_resource(pack):
    resources, _ = load(STACK_FIXTURES / "advertised-npu-resources" / "fail-1-ascend910b-requested.yaml")
    assert [d for r in resources for d in pack.analyze(as_recorded(r), {})
            if d.policy == "advertised-npu-resources"] == []


def host(name: str, inputs_driver: str, outputs_driver: str | None) -> Recorded:
    """An AscendHost component as recorded: its inputs, and the outputs it registered (None: registered none)."""
    def facts(driver: str) -> dict:
        return {"node": name, "versions": {"firmware": "7.3.0.1.231", "driver": driver, "cann": "8.0.0"}}
    return Recorded(urn=f"urn:pulumi:test::fixture::ascend-npu:index:AscendHost::{name}", type=HOST_TYPE, name=name,
                    parent="", custom=False, dependencies=[], property_dependencies={}, provider="",
                    properties=facts(inputs_driver), outputs=facts(outputs_driver) if outputs_driver else {})


def test_a_component_is_judged_on_what_it_registered_as_outputs_as_the_engine_does(pack):
    """pulumi v3 deploy/step_generator.go AnalyzeResources: AnalyzeStack gets each resource's outputs."""
    split = [host("a", "24.1.rc2", "24.1.rc2"), host("b", "24.1.rc2", "24.1.rc3"), host("c", "24.1.rc2", "24.1.rc2")]
    assert [d.policy for d in pack.analyze_stack(split, {}) if d.policy == "single-driver-version"] == \
        ["single-driver-version"]
    unstated = [host("a", "24.1.rc2", None), host("b", "24.1.rc3", None), host("c", "24.1.rc2", None)]
    assert [d for d in pack.analyze_stack(unstated, {}) if d.policy == "single-driver-version"] == []


def test_every_node_states_its_versions_where_stack_rules_read_them():
    from components.plan.stack_plan import load_config, run_stack
    hosts = [r for r in run_stack(load_config("prod")) if r.type == HOST_TYPE]
    assert hosts and all(r.outputs.get("versions") == r.properties["versions"] for r in hosts)
    assert all(r.outputs["node"] == r.properties["node"] for r in hosts)
