"""The plan, the host commands and the chart are the same in every process, whatever the hash seed."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stacks import ROOT

SEEDS = ("0", "1", "4242")
PLAN_OUTPUTS = ("resources.json", "chart-values.yaml", "graph.mmd")


def _run(module_args: list[str], seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-m", *module_args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def _digests(directory: Path) -> dict[str, str]:
    return {p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_is_byte_identical_under_every_hash_seed(tmp_path, stack):
    """resources.json holds every install and verify command: a difference would re-run hosts on `pulumi up`."""
    outputs = {}
    for seed in SEEDS:
        out = tmp_path / seed
        _run(["components.plan", "--stack", stack, "--out", str(out)], seed)
        outputs[seed] = {name: (out / name).read_bytes() for name in PLAN_OUTPUTS}
    first = outputs[SEEDS[0]]
    for seed in SEEDS[1:]:
        for name in PLAN_OUTPUTS:
            assert outputs[seed][name] == first[name], f"{name} differs between PYTHONHASHSEED={SEEDS[0]} and {seed}"


def test_chart_is_byte_identical_under_every_hash_seed(tmp_path):
    charts = {}
    for seed in SEEDS[:2]:
        chart_dir = tmp_path / seed / "ascend-npu"
        _run(["components.chart", "write", "--chart-dir", str(chart_dir)], seed)
        charts[seed] = _digests(chart_dir)
    assert charts[SEEDS[0]] == charts[SEEDS[1]]
    assert charts[SEEDS[0]], "the generator wrote no file"
