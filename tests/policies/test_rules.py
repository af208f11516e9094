"""Each rule against its pass/fail fixtures (names state the expected count), over the analyzer protocol."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pulumi.runtime.proto import analyzer_pb2

from components.plan.recorder import Recorded

FIXTURES = Path(__file__).parent / "fixtures"
STACK_FIXTURES = Path(__file__).parent / "stack_fixtures"
CASES = sorted(FIXTURES.glob("*/*.yaml"))
STACK_CASES = sorted(STACK_FIXTURES.glob("*/*.yaml"))
NAME = re.compile(r"^(pass|fail)-(\d+)-[a-z0-9-]+$")
UNKNOWN = "can't be known during preview"
LEVELS = {0: "advisory", 1: "mandatory"}


def as_recorded(doc: dict) -> Recorded:
    name = doc["name"]
    return Recorded(urn=f"urn:pulumi:test::fixture::{doc['type']}::{name}", type=doc["type"], name=name, parent="",
                    custom=True, dependencies=[], property_dependencies={}, provider="",
                    properties=doc["properties"])


def test_fixture_names_state_the_count():
    for case in CASES:
        kind, count = NAME.match(case.stem).groups()
        assert (kind == "pass") == (count == "0"), case.name


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_reports_the_stated_number_of_violations(pack, case: Path):
    rule = case.parent.name
    expected = int(NAME.match(case.stem).group(2))
    doc = yaml.safe_load(case.read_text())
    # Configure each rule at the level its metadata ships with unless the fixture raises or lowers it, as a site may.
    shipped = {p.name: LEVELS[p.enforcementLevel] for p in pack.info().policies}
    config = {"enforcementLevel": shipped[rule], **doc.get("config", {})}
    pack.configure({rule: config})
    try:
        diagnostics = [d for d in pack.analyze(as_recorded(doc), {}) if d.policy == rule]
    finally:
        pack.configure({})
    # A skip on an unknown value is advisory whatever the rule's level.
    level = config["enforcementLevel"]
    found = [d for d in diagnostics if d.level == level and UNKNOWN not in d.message]
    assert len(found) == expected, [d.message for d in found]
    skipped = [d for d in diagnostics if d not in found]
    assert all(UNKNOWN in d.message for d in skipped), "only unknowns may skip a rule"
    assert bool(skipped) == ("unknown" in case.stem), "a fixture with an unknown value says so in its name"


def test_every_rule_has_metadata_and_fixtures_both_ways(pack):
    info = pack.info()
    assert info.name == "ascend-npu"
    assert {p.name for p in info.policies} == {case.parent.name for case in CASES + STACK_CASES}
    for policy in info.policies:
        assert policy.name and len(policy.description) > 20, policy.name
        assert policy.enforcementLevel in LEVELS, policy.name
        assert len(policy.remediation_steps) > 20, f"{policy.name} says how to fix a violation"
        folder = STACK_FIXTURES if policy.policy_type == analyzer_pb2.POLICY_TYPE_STACK else FIXTURES
        kinds = {c.stem.split("-")[0] for c in (folder / policy.name).glob("*.yaml")}
        assert kinds == {"pass", "fail"}, f"{policy.name} needs pass and fail fixtures"
