"""End-to-end scenarios: each marked with the milestone it starts from (and the one it leaves), run in milestone order
on one world that lab.py brings there; `make e2e K=<expression>` runs any of them alone."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cache import REPO, build_problems
from engine.command_provider import ProviderChoiceError
from engine.pulumi_cli import POLICY_LAUNCHER, install_plugins
from testkit.fakenode.node import missing_requirements
from testkit.fakenode.packages import build_packages
from tests.e2e import milestones
from tests.e2e.lab import Lab
from tests.e2e.world import World

MARK = "milestone"
# What a scenario leaves that no later one may start from (a stack destroyed its own way): the next builds anew.
SPENT = "spent"


def milestones_of(item: pytest.Item) -> tuple[int, int]:
    mark = item.get_closest_marker(MARK)
    if mark is None:
        raise pytest.UsageError(f"{item.nodeid}: an end-to-end scenario needs @pytest.mark.{MARK}(start, leaves=...)")
    start = mark.args[0]
    leaves = mark.kwargs.get("leaves") or start
    return milestones.index(start), milestones.index(start if leaves == SPENT else leaves)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Milestone order, whatever the files are called: each scenario starts where the one before it left off."""
    e2e = [item for item in items if "tests/e2e/" in item.nodeid]
    if not e2e:
        return
    others = [item for item in items if item not in e2e]
    items[:] = others + sorted(e2e, key=milestones_of)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    report = yield
    if report.failed:
        item.stash[FAILED] = True
    return report


FAILED = pytest.StashKey[bool]()


def _why_not() -> str | None:
    problems = build_problems()
    if problems:
        return f"run `make engine` first: {'; '.join(problems)}"
    return missing_requirements()


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Iterator[Lab]:
    why = _why_not()
    if why:
        if os.environ.get("ASCEND_E2E_REQUIRED") == "1":
            pytest.fail(why)
        pytest.skip(why)
    try:
        # Registered for this run (ASCEND_NPU_COMMAND_PROVIDER, else the stand-in), and said before anything runs.
        install_plugins()
    except ProviderChoiceError as problem:
        pytest.fail(str(problem))
    root = tmp_path_factory.mktemp("e2e")
    lab = Lab(root, build_packages(root / "ascend-packages"))
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture
def world(lab: Lab, request: pytest.FixtureRequest) -> Iterator[World]:
    """The world at the scenario's start milestone; after it, at the milestone it leaves (or spoiled if it failed)."""
    mark = request.node.get_closest_marker(MARK)
    start, leaves = mark.args[0], mark.kwargs.get("leaves") or mark.args[0]
    world = lab.reach(start)
    yield world
    if request.node.stash.get(FAILED, False) or leaves == SPENT:
        lab.spoil()
    else:
        lab.left_at(leaves)


@pytest.fixture(scope="session")
def pack(lab: Lab) -> Path:
    """The policy pack as the CLI starts it: a copy of its folder with the `venv` its PulumiPolicy.yaml names and
    engine/run-policy-pack, the executable the CLI launches as the pack (see that file for why)."""
    folder = lab.root / "policies"
    shutil.copytree(REPO / "policies", folder, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    (folder / "venv").symlink_to(REPO / ".venv")
    shutil.copy(POLICY_LAUNCHER, folder / POLICY_LAUNCHER.name)
    return folder / POLICY_LAUNCHER.name
