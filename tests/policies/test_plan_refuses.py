"""`make plan` exits 1 naming the rule when a stack carries one resource that breaks it."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from components.plan.stack_plan import EXIT_CONFIG, EXIT_POLICY, plan
from tests.stacks import ROOT

FIXTURES = Path(__file__).parent
ONE_RESOURCE = {
    "node-privilege": "fixtures/node-privilege/fail-1-privileged-pod.yaml",
    "rbac-system-subjects": "fixtures/rbac-system-subjects/fail-1-clusterrolebinding-to-system-anonymous.yaml",
    "rbac-escalation-paths": "fixtures/rbac-escalation-paths/fail-1-clusterrole-get-nodes-proxy.yaml",
    "rbac-secrets-cluster-read": "stack_fixtures/rbac-secrets-cluster-read/fail-1-clusterrolebinding-to-edit.yaml",
    "service-external-ips": "fixtures/service-external-ips/fail-1-clusterip-with-external-ips.yaml",
}


def planned(tmp_path: Path, extra: Path) -> tuple[int, str, dict]:
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = plan("dev", tmp_path, extra=extra)
    report = json.loads((tmp_path / "policy-report.json").read_text()) if code != EXIT_CONFIG else {}
    return code, err.getvalue(), report


@pytest.mark.parametrize("rule", sorted(ONE_RESOURCE))
def test_one_bad_resource_makes_the_plan_exit_1_naming_its_rule(tmp_path, rule):
    code, err, report = planned(tmp_path, FIXTURES / ONE_RESOURCE[rule])
    assert code == EXIT_POLICY
    named = err.split("mandatory policies violated: ", 1)[1].strip().split(", ")
    assert named == [rule]
    [violation] = [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"]
    assert violation["policy"] == rule


def test_the_command_line_takes_the_extra_resources(tmp_path):
    fixture = FIXTURES / ONE_RESOURCE["service-external-ips"]
    result = subprocess.run([sys.executable, "-m", "components.plan", "--stack", "dev", "--extra-resources",
                             str(fixture), "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1, result.stderr
    assert "mandatory policies violated: service-external-ips" in result.stderr
    assert "Service 'default/intercept' claims externalIPs 8.8.8.8" in result.stdout


def test_make_plan_passes_extra_resources_on():
    result = subprocess.run(["make", "-n", "plan", "EXTRA_RESOURCES=one.yaml"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert "-m components.plan --stack dev --extra-resources one.yaml" in result.stdout, result.stdout


def test_a_malformed_extra_resource_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {kind: Pod, metadata: {name: p}}\n")
    code, err, _ = planned(tmp_path, bad)
    assert code == EXIT_CONFIG
    assert "resource 0 needs `type`" in err and "Traceback" not in err
