"""Adding a rule is one module, its page and its fixtures: a copy of the pack takes a new rule with nothing else."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from components.plan.analyzer import PolicyPackError, PolicyPackProcess
from tests.policies.test_rule_pages import rule_problems
from tests.policies.test_rules import as_recorded
from tests.stacks import ROOT

RULE = '''"""No workload runs in the `default` namespace."""
from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == "kubernetes:core/v1:Pod" and args.props["metadata"].get("namespace") == "default":
        report_violation("Pod in the default namespace", None)


POLICY = ResourceValidationPolicy(name="throwaway-probe", description="No Pod runs in the default namespace.",
                                  enforcement_level=EnforcementLevel.ADVISORY, validate=_validate,
                                  remediation_steps="Give the Pod a namespace of its own.")
'''
POD = "type: kubernetes:core/v1:Pod\nname: p\nproperties:\n  metadata: {{name: p, namespace: {ns}}}\n"
PAGE = ("# `throwaway-probe`\n\n## What it blocks\n\nPods in `default`.\n\n## Why\n\nNo owner.\n\n"
        "## Problematic example\n\n```yaml\n{fail}```\n\n## Correct example\n\n```yaml\n{ok}```\n\n"
        "## Configuration\n\n`enforcementLevel` only.\n")


@pytest.fixture
def pack_copy(tmp_path) -> Path:
    """A copy of the pack with the throwaway rule's module added to `rules/`, and nothing else changed."""
    assert not (ROOT / "policies" / "rules" / "throwaway_probe.py").exists(), "the probe's name is taken"
    copy = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", copy, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    (copy / "rules" / "throwaway_probe.py").write_text(RULE)
    return copy


def test_a_new_module_is_a_rule_the_pack_serves_and_runs(pack_copy):
    with PolicyPackProcess(pack_copy) as pack:
        names = [p.name for p in pack.info().policies]
        pod = as_recorded({"type": "kubernetes:core/v1:Pod", "name": "p",
                           "properties": {"metadata": {"name": "p", "namespace": "default"}}})
        levels = {d.policy: d.level for d in pack.analyze(pod, {})}
    assert "throwaway-probe" in names and names == sorted(names, key=lambda n: n.replace("-", "_"))
    assert levels["throwaway-probe"] == "advisory", "the level is the one the module ships with"


def test_the_checks_ask_for_its_page_and_fixtures_and_the_readme_takes_its_row(pack_copy, tmp_path):
    fixtures, stack_fixtures = tmp_path / "fixtures", tmp_path / "stack_fixtures"
    with PolicyPackProcess(pack_copy) as pack:
        lacking = [p for p in rule_problems(pack, pack_copy / "rules", fixtures, stack_fixtures)
                   if p.startswith("throwaway-probe")]
        assert lacking == ["throwaway-probe: no page rules/throwaway_probe.md",
                           "throwaway-probe: no pass fixture in fixtures/throwaway-probe/",
                           "throwaway-probe: no fail fixture in fixtures/throwaway-probe/"]
        (pack_copy / "rules" / "throwaway_probe.md").write_text(
            PAGE.format(fail=POD.format(ns="default"), ok=POD.format(ns="ml")))
        (fixtures / "throwaway-probe").mkdir(parents=True)
        (fixtures / "throwaway-probe" / "fail-1-pod-in-default.yaml").write_text(POD.format(ns="default"))
        (fixtures / "throwaway-probe" / "pass-0-pod-in-its-namespace.yaml").write_text(POD.format(ns="ml"))
        assert [p for p in rule_problems(pack, pack_copy / "rules", fixtures, stack_fixtures)
                if p.startswith("throwaway-probe")] == []
    generator = [sys.executable, str(pack_copy / "readme.py")]
    assert subprocess.run([*generator, "--check"], capture_output=True, timeout=120).returncode == 1
    assert subprocess.run(generator, capture_output=True, timeout=120).returncode == 0
    assert ("| [`throwaway-probe`](rules/throwaway_probe.md) | advisory | resource | No Pod runs in the "
            "default namespace. | none |") in (pack_copy / "README.md").read_text()


def test_a_module_without_a_policy_stops_the_pack(pack_copy):
    (pack_copy / "rules" / "helpers.py").write_text('"""Not a rule."""\n')
    started = subprocess.run([sys.executable, "-u", "."], cwd=pack_copy, capture_output=True, text=True, timeout=120)
    assert started.returncode != 0 and "rules/helpers.py defines no POLICY" in started.stderr


def test_the_plan_names_why_the_pack_did_not_start(pack_copy):
    """What the pack printed before it stopped is the plan's error, not a failure to read it."""
    (pack_copy / "rules" / "helpers.py").write_text('"""Not a rule."""\n')
    with pytest.raises(PolicyPackError, match="rules/helpers.py defines no POLICY"):
        with PolicyPackProcess(pack_copy):
            pass
