"""Day 2 through the real CLI: nodes joining, leaving and moving, the SSH key rotated, the cluster renamed; each
change touches only what it names. Simulated besides the nodes and kubelets: a training Pod holding one NPU
(npu_workload.py)."""
from __future__ import annotations

import shutil

import pytest

from components.cluster.common.node_labels import READY, RESOURCE_NAMES
from components.drain.node_state import STATE
from components.kubeapi.client import wait_for
from testkit.fakenode.packages import NEW
from tests.e2e import milestones
from tests.e2e import npu_workload as work
from tests.e2e.interrupt import Background, installer_runs, pending_operations, run_in_progress
from tests.e2e.milestones import CANARY, FIRST_THREE, FOURTH, SECOND, THIRD
from tests.e2e.world import NAMESPACE, STACK, World


@pytest.mark.milestone("upgraded", leaves="node-added")
def test_a_node_added_through_a_cancel_a_second_up_and_a_killed_cli_ends_installed_once(world: World):
    """The new node's driver installer runs long. `pulumi cancel` (the file backend's lock deleted) lets a second
    `up` start beside the first: the node's own lock stops it. The first is then killed outright, CLI and plugins
    (a cancelled CI job): its installer runs on, orphaned, and an `up` meanwhile says so. The recovery docs/day-2.md
    gives ("If `up` was interrupted") then ends in a clean `up`: the node installed once and labelled, nobody else
    touched, no node cordoned, nothing pending."""
    milestones.write_config(world, "node-added")  # its kubelet registered first: it joined before the stack names it
    before = world.install_counts(FIRST_THREE)
    world.nodes[FOURTH].knob("hold-driver", "45")
    try:
        first = Background.up(world)
        first.once("the new node's driver installer running", lambda: "driver" in installer_runs(world, FOURTH))
        world.pulumi("cancel", "--stack", STACK, "--yes", program=False)
        beside = world.up(check=False)
        assert beside.code != 0 and "another ascend-npu install is running on this node" in beside.out, \
            beside.out[-3000:]
        assert first.proc.poll() is None, "the first `up` ended early"
        first.kill_all()
        killed = first.finish()
        assert killed.code != 0
        pending = pending_operations(world)
        assert ("creating", f"ascend-npu-{FOURTH}-install") in pending, pending
        meanwhile = world.up(check=False)
        assert meanwhile.code != 0 and "a dropped connection left it orphaned; it finishes on its own" in \
            meanwhile.out, meanwhile.out[-3000:]
    finally:
        world.nodes[FOURTH].knob("hold-driver", None)
    wait_for("the orphaned install to end", lambda: not run_in_progress(world, FOURTH), 180)
    world.pulumi("refresh", "--stack", STACK, "--clear-pending-creates", "--yes", "--non-interactive", program=False)
    assert pending_operations(world) == []
    world.up()
    assert world.installed(FOURTH, "driver") == NEW["driver"]
    assert world.node_labels(FOURTH).get(READY) == "true"
    assert installer_runs(world, FOURTH).count("driver") == 1, installer_runs(world, FOURTH)
    assert world.install_counts(FIRST_THREE) == before
    assert not any(world.cordoned(name) for name in (*FIRST_THREE, FOURTH))


@pytest.mark.milestone("node-added", leaves="node-removed")
def test_a_node_removed_keeps_its_software_and_its_npu_pods_loses_its_labels_and_nobody_else_is_touched(
        world: World):
    """Its driver stays (rollout.uninstallOnDestroy is off), so its NPU Pods keep running: nothing evicts them."""
    work.run_npu_pod(world.kube, FOURTH, RESOURCE_NAMES["910B"], "train-4")
    world.write_config(milestones.config_at(world, "node-removed"))
    changes = work.planned_changes(world.preview().out)
    assert changes == {(op, f"{prefix}{FOURTH}{suffix}") for op, prefix, suffix in (
        ("delete", "ascend-npu-cluster-node-", ""), ("delete", "ascend-npu-", "-verify"),
        ("delete", "ascend-npu-", "-install"), ("delete", "ascend-npu-", ""),
        ("delete", "ascend-npu-", "-destroy"), ("delete", "ascend-npu-", "-on-destroy"),
        ("delete", "ascend-npu-", "-drain"), ("delete", "ascend-npu-", "-uncordon"))} | {
        # A node a wave: the third node's wave is the last one now, so the Stash that closed it goes (it runs nothing).
        ("delete", f"ascend-npu-wave-{len(FIRST_THREE) - 1}")}, changes
    before = world.install_counts(FIRST_THREE)
    run = world.up()
    assert f"leave {FOURTH}: its NPU software stays, so its NPU Pods keep running: labels removed" in run.out, \
        run.out[-3000:]
    assert work.pod(world.kube, "train-4")["status"]["phase"] == "Running"
    world.kube.delete(f"/api/v1/namespaces/{work.WORKLOADS}/pods/train-4")
    labels = world.node_labels(FOURTH)
    assert READY not in labels and STATE not in labels and not world.cordoned(FOURTH)
    assert world.installed(FOURTH, "driver") == NEW["driver"] and world.uninstalls(FOURTH) == []
    assert world.install_counts(FIRST_THREE) == before
    assert not any(world.cordoned(name) for name in FIRST_THREE)


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


@pytest.mark.milestone("key-rotated", leaves="cluster-renamed")
def test_the_cluster_renamed_keeps_every_node_installed_and_labelled(world: World):
    world.write_config(milestones.config_at(world, "cluster-renamed"))
    before = world.install_counts(FIRST_THREE)
    world.up()
    for name in FIRST_THREE:
        assert world.uninstalls(name) == [] and world.installed(name, "driver") == NEW["driver"], name
        assert world.node_labels(name).get(READY) == "true", name
    assert world.install_counts(FIRST_THREE) == before
    assert len(list(world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets"))) == 4


@pytest.mark.milestone("cluster-renamed", leaves="node-moved")
def test_a_node_on_a_new_address_gets_its_scripts_and_packages_staged_again(world: World):
    """The server re-addressed, as a reinstalled or moved host: nothing of ours in its /var/tmp any more. Its steps
    run again on the new address, each staging what it needs there first."""
    milestones.write_config(world, "node-moved")  # the server on its new address, its /var/tmp emptied
    node = world.nodes[SECOND]
    changes = work.planned_changes(world.preview().out)
    assert {("update", f"ascend-npu-{SECOND}-{step}") for step in ("install", "verify", "destroy")} <= \
        changes, changes
    before = world.install_counts(FIRST_THREE)
    world.up()
    assert (node.root / "var/tmp/ascend-npu-scripts/install.sh").exists()
    assert any(p.name.startswith("Ascend-hdk-310p-npu-driver") for p in (node.root / "var/tmp").rglob("*.run"))
    assert world.node_labels(SECOND).get(READY) == "true" and world.uninstalls(SECOND) == []
    # The moved node's install re-ran (idempotently: it installs nothing it has); nobody else's did.
    after = world.install_counts(FIRST_THREE)
    assert {name: after[name] - before[name] for name in (CANARY, THIRD)} == {CANARY: 0, THIRD: 0}
