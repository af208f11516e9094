"""`make template STACK=<stack>`: the committed chart rendered offline by the Helm engine with the stack's values."""
from __future__ import annotations

import subprocess
import sys

import yaml

from components.chart.template import INSTALL_ORDER, render_stack
from components.cluster.all_objects import cluster_objects
from components.cluster.values_contract import chart_values
from tests.stacks import ROOT, load_stack, patched, write_stack

from ..cluster.stacks import VARIANTS, spec_of


def documents(out) -> list[dict]:
    return [d for d in yaml.safe_load_all((out / "manifests.yaml").read_text()) if d]


def test_renders_the_objects_the_program_builds_for_the_stack(tmp_path):
    assert render_stack("prod", tmp_path) == 0
    rendered = {(d["kind"], d["metadata"]["name"]) for d in documents(tmp_path)}
    built = {(o["kind"], o["metadata"]["name"])
             for o in cluster_objects(chart_values(spec_of(VARIANTS["prod"]()), managed_by="Helm"))}
    assert rendered == built
    assert yaml.safe_load((tmp_path / "chart-values.yaml").read_text())["monitoring"]["extraLabels"] == {
        "release": "kube-prometheus-stack"}


def test_objects_come_in_helms_install_order(tmp_path):
    assert render_stack("prod", tmp_path) == 0
    kinds = [d["kind"] for d in documents(tmp_path)]
    ranks = [INSTALL_ORDER.index(k) if k in INSTALL_ORDER else len(INSTALL_ORDER) for k in kinds]
    assert ranks == sorted(ranks) and kinds.index("Namespace") < kinds.index("DaemonSet")


def test_a_refused_stack_writes_nothing_and_says_why(tmp_path, capsys):
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:monitoring.jobName": "Not A Label"}})
    path = write_stack(stack, tmp_path)
    assert render_stack("case", tmp_path / "out", path) == 2
    assert "monitoring.jobName" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_make_template_runs_offline_from_the_makefile(tmp_path):
    done = subprocess.run([sys.executable, "-m", "components.chart", "template", "--stack", "dev", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "with the Helm engine" in done.stdout and (tmp_path / "manifests.yaml").stat().st_size > 0
    assert "template:" in (ROOT / "Makefile").read_text()
