"""Day 2 through the real CLI, after test_1_first_up: an upgrade stopped by a failing node then finished, a node
added and removed, the SSH key rotated, then uninstall on destroy. Each checks the nodes' files and the API."""
from __future__ import annotations

import re
import shutil
import subprocess

from components.cluster.common.node_labels import READY
from engine.cluster import register_nodes
from testkit.fakenode.packages import NEW, OLD
from tests.e2e.world import NAMESPACE, STACK, World, node_entry

CANARY, SECOND, THIRD, FOURTH = "e2e-npu-01", "e2e-npu-02", "e2e-npu-03", "e2e-npu-04"
FIRST_THREE = (CANARY, SECOND, THIRD)
STEP_LINE = re.compile(r"^ [-+~]+\s+\S+ (\S+) (create|update|delete|replace)\b", re.MULTILINE)


def planned_changes(preview_out: str) -> set[tuple[str, str]]:
    """(operation, resource name) of every step line of a plain `pulumi preview`."""
    return {(op, name) for name, op in STEP_LINE.findall(preview_out)}


def upgraded(world: World) -> dict:
    config = world.config()
    config["versions"] = dict(NEW)
    config["packages"] = {**config["packages"], "files": world.packages.files_for(NEW)}
    return config


def uninstalls(world: World, name: str) -> list:
    return [call for call in world.nodes[name].installer_calls() if "--uninstall" in call["args"]]


def test_a_failing_installer_stops_the_later_waves_and_up_names_the_node(world: World):
    world.write_config(upgraded(world))
    before_third = len(world.install_starts(THIRD))
    world.nodes[SECOND].knob("fail-driver", "1")
    try:
        run = world.up(check=False)
    finally:
        world.nodes[SECOND].knob("fail-driver", None)
    assert run.code != 0
    assert SECOND in run.out and "driver" in run.out, run.out[-4000:]
    assert world.installed(CANARY, "driver") == NEW["driver"]
    assert world.installed(SECOND, "driver") == OLD["driver"]
    assert len(world.install_starts(THIRD)) == before_third, "a later wave ran although wave 1 failed"
    assert world.node_labels(THIRD).get(READY) == "true", "the untouched node lost its labels"


def test_the_upgrade_then_finishes_in_place_and_nothing_is_uninstalled(world: World):
    world.up()
    for name in FIRST_THREE:
        assert {kind: world.installed(name, kind) for kind in ("driver", "firmware")} == \
            {"driver": NEW["driver"], "firmware": NEW["firmware"]}, name
        assert uninstalls(world, name) == []
        assert world.node_labels(name).get(READY) == "true"


def test_a_node_added_is_installed_and_labelled_and_nobody_else_is_touched(world: World):
    config = world.config()
    config["nodes"].append(node_entry(FOURTH, world.nodes[FOURTH]))
    register_nodes(world.kube, [config["nodes"][-1]])  # the server joined the cluster before the stack names it
    world.write_config(config)
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    world.up()
    assert world.installed(FOURTH, "driver") == NEW["driver"]
    assert world.node_labels(FOURTH).get(READY) == "true"
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == before


def test_a_node_removed_loses_its_labels_keeps_its_software_and_nobody_else_is_touched(world: World):
    config = world.config()
    config["nodes"] = [node for node in config["nodes"] if node["name"] != FOURTH]
    world.write_config(config)
    changes = planned_changes(world.preview().out)
    assert changes == {(op, f"{prefix}{FOURTH}{suffix}") for op, prefix, suffix in (
        ("delete", "ascend-npu-cluster-node-", ""), ("delete", "ascend-npu-", "-verify"),
        ("delete", "ascend-npu-", "-install"), ("delete", "ascend-npu-", "-packages"), ("delete", "ascend-npu-", ""))}, \
        changes
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    world.up()
    assert READY not in world.node_labels(FOURTH)
    assert world.installed(FOURTH, "driver") == NEW["driver"] and uninstalls(world, FOURTH) == []
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == before


def test_an_ssh_key_rotated_through_the_cli_is_the_one_used_from_then_on(world: World):
    key = world.root / "rotated_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    for name in FIRST_THREE:
        authorized = world.nodes[name].ssh_dir / "authorized_keys"
        authorized.write_text(authorized.read_text() + key.with_suffix(".pub").read_text())
    world.pulumi("config", "set", "--secret", "sshPrivateKey", "--stack", STACK, program=False,
                 stdin=key.read_text())
    world.up()
    for name in FIRST_THREE:  # the old key no longer opens any node
        shutil.copy(key.with_suffix(".pub"), world.nodes[name].ssh_dir / "authorized_keys")
    run = world.pulumi("preview", "--stack", STACK, "--non-interactive", "--expect-no-changes", check=False)
    assert run.code == 0, run.out[-3000:]


def test_the_cluster_renamed_keeps_every_node_installed_and_labelled(world: World):
    config = world.config()
    config["cluster"] = {**config["cluster"], "name": "e2e-renamed"}
    world.write_config(config)
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    world.up()
    for name in FIRST_THREE:
        assert uninstalls(world, name) == [] and world.installed(name, "driver") == NEW["driver"], name
        assert world.node_labels(name).get(READY) == "true", name
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == before
    assert len(world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets")) == 4


def test_with_uninstall_on_destroy_a_renamed_node_is_relabelled_and_never_uninstalled(world: World):
    config = world.config()
    config["rollout"] = {**config["rollout"], "uninstallOnDestroy": True}
    world.write_config(config)
    world.up()
    renamed = f"{THIRD}-b"
    for node in config["nodes"]:
        if node["name"] == THIRD:
            node.update(name=renamed, previousNames=[THIRD])
    register_nodes(world.kube, [n for n in config["nodes"] if n["name"] == renamed])  # its kubelet's new name
    world.write_config(config)
    world.up()
    assert uninstalls(world, THIRD) == [] and world.installed(THIRD, "driver") == NEW["driver"]
    assert world.node_labels(renamed).get(READY) == "true"
    assert READY not in world.node_labels(THIRD)


def test_destroy_uninstalls_and_removes_labels_and_objects(world: World):
    world.pulumi("destroy", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive", program=False)
    for name in FIRST_THREE:
        assert world.installed(name, "driver") is None, name
        assert len(uninstalls(world, name)) > 0, name
    for name in world.config_node_names():
        assert READY not in world.node_labels(name)
    assert world.kube.find(f"/api/v1/namespaces/{NAMESPACE}") is None or \
        world.kube.get(f"/api/v1/namespaces/{NAMESPACE}")["status"].get("phase") == "Terminating"
    assert world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets") == []
