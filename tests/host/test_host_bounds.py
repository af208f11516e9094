"""What keeps a host step bounded and trustworthy on a real node: time limits on every installer and engine restart,
scripts run only when their hash matches, and a destroy that does what the last `up` recorded.

Simulated: the installers and systemctl (testkit's fake node, knobs `installer-sleep` and `restart-sleep`).
"""
from __future__ import annotations

import dataclasses
import time

from components.host import host_steps
from testkit.fakenode import ascend_files
from testkit.fakenode.packages import NEW

STAGED = "/var/tmp/ascend-npu-scripts"
RECORD = "/var/lib/ascend-npu/on-destroy.env"


def test_an_installer_that_runs_out_of_time_is_stopped_and_named_and_the_next_run_carries_on(node):
    node.knob("installer-sleep", "30")
    spec = node.spec(rollout={"timeouts": {"driver": 2}})
    started = time.monotonic()
    result = node.run_step(spec, "install")
    assert result.returncode != 0 and time.monotonic() - started < 25
    assert "driver 24.1.rc2: Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run --full --install-for-all " \
           "--quiet did not finish within 2 s (rollout.timeouts.driver) on node fake-npu-01 and was stopped, log " \
           "in /var/log/ascend-npu/driver.log" in result.stderr, result.stderr
    assert "stopped after 2 s" in node.path("/var/log/ascend-npu/driver.log").read_text()
    assert ascend_files.installed(node.root, "driver", "aarch64") is None
    # The lock went with the step: the next run starts at once and finishes what is left.
    node.knob("installer-sleep", None)
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert ascend_files.installed(node.root, "driver", "aarch64") == NEW["driver"]


def test_an_engine_restart_that_hangs_fails_the_step_and_keeps_the_users_config(node):
    original = 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "registry.local/pause:3.9"\n'
    config = node.path("/etc/containerd/config.toml")
    config.parent.mkdir(parents=True)
    config.write_text(original)
    node.knob("restart-sleep", "30")
    spec = node.spec(rollout={"timeouts": {"engineRestart": 2}})
    result = node.run_step(spec, "install")
    assert result.returncode != 0
    assert "containerd did not restart within 2 s (rollout.timeouts.engineRestart) on node fake-npu-01" in \
        result.stderr, result.stderr
    assert 'sandbox_image = "registry.local/pause:3.9"' in config.read_text()
    node.knob("restart-sleep", None)
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert 'sandbox_image = "registry.local/pause:3.9"' in config.read_text() and "ascend" in config.read_text()


def test_a_staged_script_that_does_not_match_its_hash_is_never_run(node):
    spec = node.spec()
    node.stage_scripts()
    staged = node.path(f"{STAGED}/install.sh")
    staged.write_text(staged.read_text().replace("set -euo pipefail", "set -euo pipefail\ntouch /tmp/owned", 1))
    result = node.run(node.steps(spec)["install"].create)
    assert result.returncode == 3 and node.installer_calls() == []
    assert "is not staged in /var/tmp/ascend-npu-scripts" in result.stderr and "run `pulumi up` again" in result.stderr


def test_a_node_whose_staged_scripts_are_gone_still_runs_the_ones_it_took(node):
    """/var/tmp emptied after a run (tmpfiles, a reboot): the root-only copies taken by hash still serve."""
    spec = node.spec()
    assert node.run_step(spec, "install").returncode == 0
    for path in node.path(STAGED).iterdir():
        path.unlink()
    again = node.run(node.steps(spec)["install"].create)
    assert again.returncode == 0, again.stderr
    assert oct(node.path("/var/lib/ascend-npu/scripts").stat().st_mode & 0o777) == "0o700"


def test_destroy_does_what_the_last_record_says(node):
    spec = node.spec()
    assert node.run_step(spec, "install").returncode == 0
    kept = node.destroy(spec)  # uninstallOnDestroy off: nothing removed, the record gone
    assert kept.returncode == 0 and "software kept" in kept.stdout
    assert ascend_files.installed(node.root, "driver", "aarch64") == NEW["driver"]
    assert not node.path(RECORD).exists()
    uninstalling = node.spec(uninstall=True)
    recorded = node.run_step(uninstalling, "on_destroy")
    assert recorded.returncode == 0 and "on destroy: uninstall driver 24.1.rc2" in recorded.stdout
    assert oct(node.path(RECORD).stat().st_mode & 0o777) == "0o600"
    installed = node.path("/var/lib/ascend-npu/install.env").read_text().splitlines()
    assert "ASCEND_DRIVER_VERSION=24.1.rc2" in installed and not any("ROOT" in line for line in installed)
    removed = node.run(node.steps(uninstalling)["on_destroy"].delete)
    assert removed.returncode == 0, removed.stderr
    assert ascend_files.installed(node.root, "driver", "aarch64") is None and not node.path(RECORD).exists()
    assert not node.path("/var/lib/ascend-npu/install.env").exists()


def test_a_tampered_record_uninstalls_nothing(node):
    spec = node.spec(uninstall=True)
    assert node.run_step(spec, "install").returncode == 0
    assert node.run_step(spec, "on_destroy").returncode == 0
    record = node.path("/var/lib/ascend-npu/install.env")
    record.write_text(record.read_text() + "rm -rf /\n")
    result = node.run(node.steps(spec)["on_destroy"].delete)
    assert result.returncode == 3 and "has a line that is no setting; nothing done" in result.stderr
    assert ascend_files.installed(node.root, "driver", "aarch64") == NEW["driver"]


def test_the_old_name_of_a_node_renamed_without_previous_names_uninstalls_nothing(node):
    """The engine creates the new name's steps first and deletes the old name's last, on the same host."""
    old = node.spec(uninstall=True)
    assert node.run_step(old, "install").returncode == 0 and node.run_step(old, "on_destroy").returncode == 0
    renamed = dataclasses.replace(old.nodes[0], name="fake-npu-01-b")
    recorded = node.run(host_steps(old, renamed)["on_destroy"].create)
    assert recorded.returncode == 0, recorded.stderr
    result = node.run(node.steps(old)["on_destroy"].delete)
    assert result.returncode == 0
    assert "now the stack's node fake-npu-01-b, not fake-npu-01: nothing done" in result.stdout
    assert ascend_files.installed(node.root, "driver", "aarch64") == NEW["driver"] and node.path(RECORD).exists()
