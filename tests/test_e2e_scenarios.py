"""The end-to-end scenarios stand alone and chain: each names its start milestone, `make e2e K=...` selects by name,
and the full run, in milestone order, walks no milestone twice (no `up` beyond the scenarios' own)."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from engine.cache import REPO
from tests.e2e import milestones
from tests.e2e.conftest import SPENT


def collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests/e2e", *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def marks(nodeid: str) -> tuple[str, str]:
    path, name = nodeid.split("::")
    function = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
    mark = next(m for m in function.pytestmark if m.name == "milestone")
    return mark.args[0], mark.kwargs.get("leaves") or mark.args[0]


def test_in_full_run_order_each_scenario_starts_where_the_one_before_left_the_world():
    """A scenario that leaves its world spent (SPENT: a stack destroyed its own way) hands the next a new one."""
    order = [(start, "fresh" if left == SPENT else left) for start, left in map(marks, collected())]
    assert order[0][0] == "fresh"
    walked = [milestones.walk(left, start) for (_, left), (start, _) in zip(order, order[1:])]
    assert walked == [[]] * (len(order) - 1), list(zip(collected()[1:], walked))
    assert order[-1][1] == milestones.NAMES[-1]


def test_every_milestone_is_some_scenario_s_start_or_end():
    seen = {name for pair in map(marks, collected()) for name in pair} - {SPENT}
    assert seen == set(milestones.NAMES), set(milestones.NAMES) ^ seen


def test_make_e2e_k_drain_selects_the_upgrade_with_drain_scenario_alone():
    recipe = subprocess.run(["make", "-n", "e2e", "K=drain"], cwd=REPO, capture_output=True, text=True).stdout
    assert 'pytest -v -p no:cacheprovider -s tests/e2e -k "drain"' in recipe, recipe
    assert [nodeid.split("::")[0] for nodeid in collected("-k", "drain")] == ["tests/e2e/test_upgrade_drain.py"] * 3


@pytest.mark.parametrize("start, target, passes", [
    ("fresh", "upgraded", ["installed", "upgraded"]),
    ("installed", "upgrade-stopped", ["upgrade-stopped"]),
    ("upgrade-stopped", "node-added", ["upgraded", "node-added"]),
    ("upgraded", "upgraded", []),
])
def test_a_walk_goes_around_the_detours_it_does_not_end_on(start, target, passes):
    assert milestones.walk(start, target) == passes


def test_an_unknown_milestone_names_the_ones_there_are():
    with pytest.raises(ValueError, match="no milestone 'upgrade'; the milestones are fresh, installed"):
        milestones.index("upgrade")
