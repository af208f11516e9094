"""What the state holds of a host step's command, and what the node runs: the inlined scripts (run_step.sh,
run_destroy.sh) are stored by name and put back by node_step before it sends the command; a command an earlier release
stored whole is sent as it was. Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.config.config_source import spec_from_values
from components.host.commands import host_steps, sudo_prefix
from components.host.node_step import ON_DESTROY, ON_NODE
from components.host.script_set import _script, destroy_command, run_command, sent, stored
from components.host.step_runner import destroy_command as local_destroy
from components.host.step_runner import step_command
from components.plan.stack_files import read_stack_config
from tests.host.test_host_install import installed
from tests.host.test_node_step import REPO, run, spec_for
from tests.stacks import ROOT

EARLIER = yaml.safe_load(Path(__file__).with_name("stored_destroy_environment.yaml").read_text())
EARLIER_PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDU0QpdHalnZ1zH3szZcOUbYzaVDzE+HZhT/Vx0zltGn"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_step_sends_exactly_its_command_while_the_state_holds_no_inlined_script(stack):
    config = read_stack_config(ROOT, stack)
    spec = spec_from_values(config.values, config.secret_keys)
    for node in spec.nodes:
        for step in host_steps(spec, node).values():
            _, environment = step_command(spec, node, step)
            held = environment[ON_NODE]
            assert sent(held) == step.create
            assert _script("run_step.sh") not in held and 'bash -c "$ASCEND_NPU_RUN_STEP" ascend-npu ' in held
            assert len(step.create) - len(held) > 1000
            if step.delete:
                _, kept = local_destroy(spec, node, step)
                assert sent(kept[ON_DESTROY]) == step.delete and _script("run_destroy.sh") not in kept[ON_DESTROY]


@pytest.mark.parametrize("user", ["root", "deploy"])
def test_a_destroy_command_stored_whole_by_the_release_before_is_sent_as_stored_and_is_todays(user):
    earlier = EARLIER[ON_DESTROY][user]
    assert sent(earlier) == earlier
    assert earlier == destroy_command(sudo_prefix(user, "on-destroy", "bash -c true"), "fake-npu-01")


def test_a_value_that_spells_a_stored_name_is_never_replaced():
    """Only the call that ends the command is put back; the same words inside a quoted value stay as written."""
    words = 'x bash -c "$ASCEND_NPU_RUN_STEP" ascend-npu verify 00'
    command = run_command("", [("ASCEND_NODE", words), ("ASCEND_MIRROR_URL", words)], ("verify",))
    assert stored(command).count(_script("run_step.sh").split("\n")[0]) == 0
    assert sent(stored(command)) == command
    assert sent(command) == command


def test_the_delete_the_release_before_stored_uninstalls_the_node_today(node):
    """Its stored delete line and environment, replayed as v1.2.1 replays them (local/commandController.go L93-99),
    by today's node_step, on a node today's steps installed and recorded."""
    spec = spec_for(node, uninstall=True)
    assert run(spec).returncode == 0
    assert run(spec, "on_destroy").returncode == 0
    delete = EARLIER["delete"]["root"].replace("127.0.0.1:22", f"127.0.0.1:{node.port}").replace(
        EARLIER_PIN, spec.nodes[0].host_key)
    assert "--agent" in delete  # that stack had no key: this one's goes on stdin, which --agent leaves unread
    delete = delete.replace(" --agent", "")
    environment = {**os.environ, ON_DESTROY: EARLIER[ON_DESTROY]["root"], "ASCEND_NPU_PYTHON": sys.executable}
    done = subprocess.run(["/bin/sh", "-c", delete], cwd=REPO, input=json.dumps({"key": spec.ssh_private_key}),
                          capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    assert installed(node, "driver") is None and installed(node, "dockerRuntime") is None
