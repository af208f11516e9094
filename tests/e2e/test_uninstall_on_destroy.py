"""`rollout.uninstallOnDestroy` through the real CLI: turning it on re-runs no installer, a renamed node (with or
without previousNames) is never uninstalled, and `pulumi destroy` uninstalls and removes labels and objects."""
from __future__ import annotations

import pytest

from components.cluster.common.node_labels import READY
from testkit.fakenode.packages import NEW
from tests.e2e import milestones
from tests.e2e import npu_workload as work
from tests.e2e.milestones import FIRST_THREE, RENAMED_SECOND, RENAMED_THIRD, SECOND, THIRD
from tests.e2e.world import NAMESPACE, STACK, World


@pytest.mark.milestone("node-moved", leaves="uninstall-on-destroy")
def test_turning_uninstall_on_destroy_on_reruns_no_installer(world: World):
    milestones.write_config(world, "uninstall-on-destroy")
    changes = work.planned_changes(world.preview().out)
    # The uncordon step's delete now drains the node first (its software goes after it): a new stored line. The
    # destroy record says uninstall; the destroy's own stored text stays as it is.
    assert changes == {("update", f"ascend-npu-{name}-{step}") for name in FIRST_THREE
                       for step in ("destroy", "uncordon")}, changes
    before = world.install_counts(FIRST_THREE)
    run = world.up()
    assert world.install_counts(FIRST_THREE) == before
    touched = [line for line in run.out.splitlines() if "upgrade-state=upgrade-done" in line]
    assert touched == [], f"re-running a finished uncordon touched a node: {touched}"
    for name in FIRST_THREE:
        record = (world.nodes[name].root / "var/lib/ascend-npu/on-destroy.env").read_text()
        assert "ASCEND_ON_DESTROY=uninstall" in record.splitlines(), record


@pytest.mark.milestone("uninstall-on-destroy", leaves="renamed-with-previous-names")
def test_with_uninstall_on_destroy_a_renamed_node_is_relabelled_and_never_uninstalled(world: World):
    milestones.write_config(world, "renamed-with-previous-names")
    world.up()
    assert world.uninstalls(THIRD) == [] and world.installed(THIRD, "driver") == NEW["driver"]
    assert world.node_labels(RENAMED_THIRD).get(READY) == "true"
    assert READY not in world.node_labels(THIRD)


@pytest.mark.milestone("renamed-with-previous-names", leaves="renamed")
def test_with_uninstall_on_destroy_a_node_renamed_without_previous_names_is_never_uninstalled(world: World):
    """Without previousNames the new name's steps are created and the old name's deleted, on the same host: the old
    delete finds the host recorded under the new name and does nothing."""
    milestones.write_config(world, "renamed")
    changes = work.planned_changes(world.preview().out)
    assert ("delete", f"ascend-npu-{SECOND}-on-destroy") in changes and \
        ("create", f"ascend-npu-{RENAMED_SECOND}-on-destroy") in changes, changes
    run = world.up()
    assert f"this host is now the stack's node {RENAMED_SECOND}, not {SECOND}: nothing done" in run.out, \
        run.out[-3000:]
    assert world.uninstalls(SECOND) == [] and world.installed(SECOND, "driver") == NEW["driver"]
    assert world.node_labels(RENAMED_SECOND).get(READY) == "true" and READY not in world.node_labels(SECOND)


@pytest.mark.milestone("renamed", leaves="destroyed")
def test_destroy_uninstalls_and_removes_labels_and_objects(world: World):
    world.pulumi("destroy", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive", program=False)
    for name in FIRST_THREE:
        assert world.installed(name, "driver") is None, name
        assert len(world.uninstalls(name)) > 0, name
    for name in world.config_node_names():
        assert READY not in world.node_labels(name)
    assert world.kube.find(f"/api/v1/namespaces/{NAMESPACE}") is None or \
        world.kube.get(f"/api/v1/namespaces/{NAMESPACE}")["status"].get("phase") == "Terminating"
    assert list(world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets")) == []
