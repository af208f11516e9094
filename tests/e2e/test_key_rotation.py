"""The SSH key rotated through the CLI: every node's steps update and re-run idempotently with the new key, and the
old key is not needed again."""
from __future__ import annotations

import shutil

import pytest

from tests.e2e import milestones
from tests.e2e.milestones import FIRST_THREE
from tests.e2e.world import STACK, World


@pytest.mark.milestone("node-removed", leaves="key-rotated")
def test_an_ssh_key_rotated_through_the_cli_is_the_one_used_from_then_on(world: World):
    keys_before = set(world.root.glob("key-*"))
    milestones.rotate_key(world, milestones.config_at(world, "key-rotated"))
    key = next(path for path in set(world.root.glob("key-*")) - keys_before if path.suffix != ".pub")
    world.up()
    for name in FIRST_THREE:  # the old key no longer opens any node
        shutil.copy(key.with_suffix(".pub"), world.nodes[name].ssh_dir / "authorized_keys")
    run = world.pulumi("preview", "--stack", STACK, "--non-interactive", "--expect-no-changes", check=False)
    assert run.code == 0, run.out[-3000:]
