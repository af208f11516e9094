"""Running Prometheus' own `promtool` on the alert rules: input series, expected alerts, the check and the test."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package `prometheus`)")
JOB = 'job="ascend-npu-exporter"'


def series(name: str, labels: str, values: str) -> dict[str, str]:
    return {"series": f"{name}{{{labels}}}", "values": values}


def alert(eval_time: str, name: str, *fired: tuple[dict[str, str], dict[str, str]]) -> dict:
    """One `alert_rule_test`: at `eval_time`, exactly the `fired` (labels, annotations) pairs are firing."""
    return {"eval_time": eval_time, "alertname": name,
            "exp_alerts": [{"exp_labels": labels, "exp_annotations": notes} for labels, notes in fired]}


def chip(node: str, npu: str, severity: str, **extra: str) -> dict[str, str]:
    return {"job": "ascend-npu-exporter", "node": node, "id": npu, "severity": severity, **extra}


def promtool(*args: str) -> subprocess.CompletedProcess:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120)


def run_rule_tests(rules_text: str, tests: list[dict], tmp_path: Path) -> subprocess.CompletedProcess:
    """`promtool test rules` of `tests` against the rules file `rules_text`."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(rules_text)
    unit = tmp_path / "rules-test.yaml"
    unit.write_text(yaml.safe_dump({"rule_files": [rules.name], "evaluation_interval": "1m", "tests": tests},
                                   sort_keys=False))
    return promtool("test", "rules", str(unit))



def cases_missing(groups: list[dict[str, Any]], tests: list[dict]) -> list[str]:
    """Alerts of `groups` lacking a firing or a quiet case in `tests`."""
    cases = [case for test in tests for case in test["alert_rule_test"]]
    return [rule["alert"] for group in groups for rule in group["rules"]
            if {bool(c["exp_alerts"]) for c in cases if c["alertname"] == rule["alert"]} != {True, False}]
