"""`make bench`'s real-engine part at a toy size, so that its harness runs wherever the engine is built: both previews
through the real CLI against a control plane of their own, then both `up`s, the program's against a fleet of fake
nodes behind a bastion; as many resources on each side, and the figures printed. It asserts no time (the bench
measures, tests do not)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from engine.cache import REPO
from tests.e2e.lab import Lab

ROW = re.compile(r"^\s+(\d+) nodes,\s+(\d+) resources: program .* bare .* ratio [0-9.]+", re.MULTILINE)


@pytest.mark.milestone("fresh")
def test_the_real_engine_bench_runs_both_programs_at_a_toy_size(lab: Lab):
    done = subprocess.run([sys.executable, "-m", "bench.real_engine", "3", "6", "--skip-checkpoints"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = ROW.findall(done.stdout)
    assert [int(nodes) for nodes, _ in rows] == [3, 6], done.stdout[-3000:]
    assert int(rows[1][1]) > int(rows[0][1]) > 0
    assert "growth from 3: program" in done.stdout and "error" not in done.stdout
    assert "PULUMI_SKIP_CHECKPOINTS=true" in done.stdout and "command provider (" in done.stdout


STATE = re.compile(r"after up: state \(`pulumi stack export`, compact JSON\) program ([0-9.]+) MB, bare ([0-9.]+) MB; "
                   r"per node ([0-9.]+) KiB in the resources whose URN names it \(largest, KiB: .*\), "
                   r"the whole state / N .*; ssh connections to the nodes: (\d+) in all, at most (\d+) at once")


@pytest.mark.milestone("fresh")
def test_the_real_engine_bench_ups_both_programs_against_a_fleet_at_a_toy_size(lab: Lab):
    done = subprocess.run([sys.executable, "-m", "bench.real_engine", "--up", "4"], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    rows = ROW.findall(done.stdout)
    assert [int(nodes) for nodes, _ in rows] == [4] and int(rows[0][1]) > 4 * 6, done.stdout[-3000:]
    state = STATE.search(done.stdout)
    assert state, done.stdout[-3000:]
    program_mb, bare_mb, per_node_kib, opened, at_once = state.groups()
    assert float(program_mb) > float(bare_mb) > 0 and float(per_node_kib) > 0
    # Each node's install, verify and destroy record: one connection each, shared by the hashes read, the scripts
    # sent and the step.
    assert int(opened) == 4 * 3 and 1 <= int(at_once) <= int(opened)
    parts = re.search(r"program CPU by part, s: (.*)", done.stdout)
    assert parts and all(part in parts.group(1) for part in ("engine (the CLI)", "program host", "local commands"))
    assert "checkpoints on (PULUMI_SKIP_CHECKPOINTS unset" in done.stdout and "command provider (" in done.stdout
    assert "error" not in done.stdout
