"""Every rule the pack serves has its page beside its module, examples the pack judges as stated, and fixtures."""
from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import yaml
from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2

from tests.policies.test_rules import FIXTURES, LEVELS, STACK_FIXTURES, UNKNOWN, as_recorded
from tests.stacks import ROOT
from tests.test_docs import link_problems

RULES = ROOT / "policies" / "rules"
SECTIONS = ["What it blocks", "Why", "Problematic example", "Correct example", "Configuration"]
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


def module_of(rule: str) -> str:
    return rule.replace("-", "_")


def sections(text: str) -> dict[str, str]:
    """The `## ` sections of a page by heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def example_violations(pack, policy, doc) -> int:
    """How many violations of POLICY the pack reports for an example written as the rule's fixtures are."""
    stack = policy.policy_type == analyzer_pb2.POLICY_TYPE_STACK
    resources, config = (doc, {}) if isinstance(doc, list) else (doc.get("resources", [doc]), doc.get("config", {}))
    pack.configure({policy.name: {"enforcementLevel": LEVELS[policy.enforcementLevel], **config}})
    try:
        recorded = [as_recorded(r) for r in resources]
        found = pack.analyze_stack(recorded, {}) if stack else [d for r in recorded for d in pack.analyze(r, {})]
    finally:
        pack.configure({})
    return len([d for d in found if d.policy == policy.name and UNKNOWN not in d.message])


def page_problems(pack, policy, rules: Path = RULES) -> list[str]:
    page = rules / f"{module_of(policy.name)}.md"
    if not page.exists():
        return [f"{policy.name}: no page {page.relative_to(page.parents[1])}"]
    found = sections(page.read_text())
    problems = [f"{policy.name}: no section `## {s}`" for s in SECTIONS if s not in found]
    keys = {"enforcementLevel", *json_format.MessageToDict(policy.configSchema.properties)}
    problems += [f"{policy.name}: Configuration does not name `{key}`" for key in sorted(keys)
                 if f"`{key}`" not in found.get("Configuration", "")]
    for section, fails in (("Problematic example", True), ("Correct example", False)):
        blocks = YAML_BLOCK.findall(found.get(section, ""))
        if len(blocks) != 1:
            problems.append(f"{policy.name}: {section} needs one ```yaml block, has {len(blocks)}")
        elif (example_violations(pack, policy, yaml.safe_load(blocks[0])) > 0) != fails:
            problems.append(f"{policy.name}: the pack {'passes' if fails else 'refuses'} the {section.lower()}")
    return problems


def fixture_problems(policy, fixtures: Path = FIXTURES, stack_fixtures: Path = STACK_FIXTURES) -> list[str]:
    folder = stack_fixtures if policy.policy_type == analyzer_pb2.POLICY_TYPE_STACK else fixtures
    kinds = {case.stem.split("-")[0] for case in (folder / policy.name).glob("*.yaml")}
    return [f"{policy.name}: no {kind} fixture in {folder.name}/{policy.name}/" for kind in ("pass", "fail")
            if kind not in kinds]


def rule_problems(pack, rules: Path = RULES, fixtures: Path = FIXTURES, stack_fixtures: Path = STACK_FIXTURES):
    """What each rule the pack serves lacks: its module's name, its page, its fixtures."""
    infos = pack.info().policies
    modules = sorted(m.name for m in pkgutil.iter_modules([str(rules)]) if not m.name.startswith("_"))
    problems = [f"rules/{m}.py serves no rule named after it" for m in modules
                if m not in {module_of(p.name) for p in infos}]
    for policy in infos:
        problems += page_problems(pack, policy, rules) + fixture_problems(policy, fixtures, stack_fixtures)
    return problems


def test_rules_are_served_in_the_order_of_their_modules(pack):
    names = [p.name for p in pack.info().policies]
    assert names == sorted(names, key=module_of)


def test_every_rule_has_its_page_and_its_fixtures(pack):
    assert rule_problems(pack) == []


def test_rule_pages_link_only_to_what_exists():
    assert [problem for page in sorted(RULES.glob("*.md")) for problem in link_problems(page, page.read_text())] == []


def test_the_page_check_sees_what_a_page_lacks(pack, tmp_path):
    [policy] = [p for p in pack.info().policies if p.name == "service-external-ips"]
    page = (RULES / "service_external_ips.md").read_text()
    wrong = sections(page)["Correct example"]
    (tmp_path / "service_external_ips.md").write_text(
        page.replace("## Why", "## Reasons").replace("`allowedExternalIPs`", "the allow-list")
        .replace(sections(page)["Problematic example"], wrong))
    assert page_problems(pack, policy, tmp_path) == [
        "service-external-ips: no section `## Why`",
        "service-external-ips: Configuration does not name `allowedExternalIPs`",
        "service-external-ips: the pack passes the problematic example"]
