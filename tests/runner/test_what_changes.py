"""A step's stored text changes only when what that step runs changes: the whole program, planned under mocks for the
prod example (behind a bastion, with the stack's key), before and after one script is edited, stores new inputs
for exactly the resources that run the script (docs/host-layer.md, What changes when)."""
from __future__ import annotations

import shutil

import pytest

from components.host import script_set
from components.plan.recorder import mask
from tests.conftest import run_stack_file
from tests.stacks import ROOT

STACK = "prod"


def stored(tmp_path) -> dict[str, str]:
    """Each resource's stored inputs (secrets masked), by name."""
    return {r.name: repr(sorted(mask(r.properties).items())) for r in run_stack_file(ROOT / f"Pulumi.{STACK}.yaml",
                                                                                       STACK)}


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    return stored(tmp_path_factory.mktemp("before"))


# Each script's steps at the level of a step's call: tests/host/test_host_steps.py; here, the whole program's resources.
@pytest.mark.parametrize("script, steps", [
    ("uninstall.sh", {"destroy"}),
    ("verify.sh", {"verify"}),
    ("engine_containerd.sh", {"install", "verify", "destroy"}),  # install and uninstall both merge the config
])
def test_editing_one_script_changes_only_the_resources_that_run_it(before, tmp_path, monkeypatch, script, steps):
    edited = tmp_path / "scripts"
    shutil.copytree(script_set.SCRIPTS, edited)
    (edited / script).write_text((edited / script).read_text() + "# a comment, and nothing else\n")
    monkeypatch.setattr(script_set, "SCRIPTS", edited)
    monkeypatch.chdir(tmp_path)  # the program renders the edited scripts here, not in the checkout
    after = stored(tmp_path)
    assert set(after) == set(before)
    changed = {name for name in after if after[name] != before[name]}
    nodes = {name.rsplit("-", 1)[0] for name in changed}
    assert len(nodes) > 1 and changed == {f"{node}-{step}" for node in nodes for step in steps
                                          if f"{node}-{step}" in before}, sorted(changed)


def test_planning_again_with_nothing_edited_changes_nothing(before, tmp_path):
    assert stored(tmp_path) == before
