"""Day 2 through the real CLI, after test_1_first_up: an upgrade that drains (a budget holding it, then letting it
through) stopped by a failing node then finished, a node added and removed (drained first), the SSH key rotated,
then uninstall on destroy. Each checks the nodes' files and the API.

Simulated besides the nodes and kubelets: the NPU work, a Pod holding one NPU that kwok runs
(tests/e2e/npu_workload.py).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

from components.cluster.common.node_labels import READY, RESOURCE_NAMES
from components.drain.node_state import CORDONED_BY, STATE
from engine.cluster import register_nodes
from engine.control_plane import REPO
from testkit.fakenode.packages import NEW, OLD
from tests.e2e import npu_workload as work
from tests.e2e.least_privilege import DRAIN_RULES, docs_rules, kubeconfig_for
from tests.e2e.world import CHIPS, MOVED_ADDRESS, NAMESPACE, STACK, World, node_entry

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


def node_object(world: World, name: str) -> dict:
    return world.kube.get(f"/api/v1/nodes/{name}")


def cordoned(world: World, name: str) -> bool:
    return bool(node_object(world, name)["spec"].get("unschedulable"))


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def show_timeline(world: World, title: str, output: str, names, since: str) -> list[str]:
    lines = work.timeline(output, {name: world.nodes[name].root for name in names}, since)
    with (world.root / "timeline.txt").open("a") as out:
        out.write(f"\n# {title}\n" + "\n".join(lines) + "\n")
    print(f"e2e: {title}:\n" + "\n".join(lines), flush=True)
    return lines


def test_an_upgrade_drains_through_a_budget_and_a_failing_node_stays_cordoned(world: World):
    """Wave 0: the canary's training Pod is held by its budget, then let go; wave 1 fails and stays cordoned."""
    resource = RESOURCE_NAMES[CHIPS.get(CANARY, "910B")]
    trainer = work.run_npu_pod(world.kube, CANARY, resource, "train-0")
    work.guard(world.kube, min_available=1)
    world.write_config(upgraded(world))
    preview = world.preview("--diff").out  # which nodes will be drained, and why
    assert {("update", f"ascend-npu-{name}-drain") for name in FIRST_THREE} <= planned_changes(
        world.preview().out)
    reason = re.compile(r'ASCEND_NPU_DRAIN_FOR: "driver (\S+), firmware (\S+?)[,"].* => "driver (\S+), firmware '
                        r'(\S+?)[,"]')
    assert reason.findall(preview) == [(OLD["driver"], OLD["firmware"], NEW["driver"], NEW["firmware"])] * 6, \
        preview[-6000:]
    before_third = len(world.install_starts(THIRD))
    world.nodes[SECOND].knob("fail-driver", "1")
    result: dict = {}
    started = utc_now()
    upgrade = threading.Thread(target=lambda: result.update(run=world.up(check=False)))
    upgrade.start()
    try:
        deadline = time.monotonic() + 600
        while node_object(world, CANARY)["metadata"].get("labels", {}).get(STATE) != "draining":
            assert upgrade.is_alive() and time.monotonic() < deadline, "the canary was never drained"
            time.sleep(0.5)
        time.sleep(12)  # two refusals of the budget: the Pod stays, nothing is installed
        assert work.pod(world.kube, "train-0")["metadata"]["uid"] == trainer["metadata"]["uid"]
        assert cordoned(world, CANARY) and world.installed(CANARY, "driver") == OLD["driver"]
        work.guard(world.kube, min_available=0)
    finally:
        upgrade.join(timeout=1800)
        world.nodes[SECOND].knob("fail-driver", None)
    run = result["run"]
    assert run.code != 0
    assert SECOND in run.out and "driver" in run.out, run.out[-4000:]
    assert "would violate the pod's disruption budget" in run.out, run.out[-4000:]
    assert work.pod(world.kube, "train-0") is None
    # The canary: drained, upgraded, verified, uncordoned. Wave 1: cordoned and labelled where it stopped.
    assert world.installed(CANARY, "driver") == NEW["driver"] and not cordoned(world, CANARY)
    assert world.node_labels(CANARY).get(STATE) == "upgrade-done"
    assert world.installed(SECOND, "driver") == OLD["driver"]
    assert cordoned(world, SECOND) and world.node_labels(SECOND).get(STATE) == "upgrading"
    assert len(world.install_starts(THIRD)) == before_third, "a later wave ran although wave 1 failed"
    assert not cordoned(world, THIRD) and STATE not in world.node_labels(THIRD)
    assert world.node_labels(THIRD).get(READY) == "true", "the untouched node lost its labels"
    lines = show_timeline(world, "upgrade, wave 0 held by a budget, wave 1 failing", run.out, FIRST_THREE, started)
    canary = [line.split(None, 3)[3] for line in lines if f" {CANARY} " in line]
    order = ["cordoned", "refused", "evicted", "installed", "verified", "uncordoned"]
    found = [next(i for i, text in enumerate(canary) if word in text) for word in order]
    assert found == sorted(found), canary


def test_the_upgrade_then_finishes_in_place_and_nothing_is_uninstalled(world: World):
    started = utc_now()
    run = world.up()
    for name in FIRST_THREE:
        assert {kind: world.installed(name, kind) for kind in ("driver", "firmware")} == \
            {"driver": NEW["driver"], "firmware": NEW["firmware"]}, name
        assert uninstalls(world, name) == []
        assert world.node_labels(name).get(READY) == "true"
        assert not cordoned(world, name) and CORDONED_BY not in node_object(world, name)["metadata"].get(
            "annotations", {}), name
    assert world.node_labels(SECOND).get(STATE) == world.node_labels(THIRD).get(STATE) == "upgrade-done"
    lines = show_timeline(world, "upgrade finished, waves 1 and 2", run.out, (SECOND, THIRD), started)
    third = [line for line in lines if f" {THIRD} " in line]
    assert [w for w in ("cordoned", "drained", "installed", "verified", "uncordoned")
            if not any(w in line for line in third)] == [], third
    # Wave 2 starts only once wave 1 is uncordoned: never two waves cordoned at once.
    second_done = max(line[:20] for line in lines if f" {SECOND} " in line and "uncordoned" in line)
    assert min(line[:20] for line in third) >= second_done


def test_the_drain_needs_no_more_than_the_docs_grant(world: World):
    """The drain run as a ServiceAccount bound to exactly the documented rules; without pods/eviction it fails."""
    rules = docs_rules(DRAIN_RULES)
    server, ca = world.kube.server, world.plane.pki / "ca.crt"

    def drain(kubeconfig, step: str) -> subprocess.CompletedProcess:
        env = {**world.env(), "KUBECONFIG": str(kubeconfig), "ASCEND_NPU_DRAIN_FOR": "driver x, firmware y",
               "PULUMI_COMMAND_STDOUT": '{"for": "driver w, firmware y"}'}
        return subprocess.run([sys.executable, "-m", "components.drain", step, "--node", THIRD, "--timeout", "30"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    granted = kubeconfig_for(world.kube, "drain-granted", rules, server, ca, world.root)
    for step, said in (("before-host", "drained (0 Pod(s) evicted)"), ("after-host", "uncordoned")):
        done = drain(granted, step)
        assert done.returncode == 0 and said in done.stdout, done.stdout + done.stderr
    assert not cordoned(world, THIRD)
    short = [r for r in rules if r["resources"] != ["pods/eviction"]]
    work.run_npu_pod(world.kube, THIRD, RESOURCE_NAMES["910B"], "train-3")
    try:
        denied = drain(kubeconfig_for(world.kube, "drain-short", short, server, ca, world.root), "before-host")
    finally:
        world.kube.delete(f"/api/v1/namespaces/{work.WORKLOADS}/pods/train-3")
        drain(granted, "after-host")
    assert denied.returncode == 1 and 'cannot create resource "pods/eviction"' in denied.stderr, denied.stderr


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


def test_a_node_removed_is_drained_loses_its_labels_keeps_its_software_and_nobody_else_is_touched(world: World):
    work.run_npu_pod(world.kube, FOURTH, RESOURCE_NAMES["910B"], "train-4")
    config = world.config()
    config["nodes"] = [node for node in config["nodes"] if node["name"] != FOURTH]
    world.write_config(config)
    changes = planned_changes(world.preview().out)
    assert changes == {(op, f"{prefix}{FOURTH}{suffix}") for op, prefix, suffix in (
        ("delete", "ascend-npu-cluster-node-", ""), ("delete", "ascend-npu-", "-verify"),
        ("delete", "ascend-npu-", "-install"), ("delete", "ascend-npu-", "-packages"), ("delete", "ascend-npu-", ""),
        ("delete", "ascend-npu-", "-scripts"), ("delete", "ascend-npu-", "-on-destroy"),
        ("delete", "ascend-npu-", "-drain"), ("delete", "ascend-npu-", "-uncordon"))}, changes
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    run = world.up()
    assert f"leave {FOURTH}: drained (1 evicted), labels removed; uncordoned" in run.out, run.out[-3000:]
    assert work.pod(world.kube, "train-4") is None
    labels = world.node_labels(FOURTH)
    assert READY not in labels and STATE not in labels and not cordoned(world, FOURTH)
    assert world.installed(FOURTH, "driver") == NEW["driver"] and uninstalls(world, FOURTH) == []
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == before
    assert not any(cordoned(world, name) for name in FIRST_THREE)


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


def test_a_node_on_a_new_address_gets_its_scripts_and_packages_staged_again(world: World):
    """The server re-addressed, as a reinstalled or moved host: nothing of ours in its /var/tmp any more."""
    node = world.nodes[SECOND]
    node.move(MOVED_ADDRESS)
    shutil.rmtree(node.root / "var/tmp")
    (node.root / "var/tmp").mkdir()
    config = world.config()
    for entry in config["nodes"]:
        if entry["name"] == SECOND:
            entry["address"] = MOVED_ADDRESS
    world.write_config(config)
    changes = planned_changes(world.preview().out)
    assert {("replace", f"ascend-npu-{SECOND}-{copy}") for copy in ("scripts", "packages")} <= changes, changes
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    world.up()
    assert (node.root / "var/tmp/ascend-npu-scripts/install.sh").exists()
    assert any(p.name.startswith("Ascend-hdk-310p-npu-driver") for p in (node.root / "var/tmp").rglob("*.run"))
    assert world.node_labels(SECOND).get(READY) == "true" and uninstalls(world, SECOND) == []
    # The moved node's install re-ran (idempotently: it installs nothing it has); nobody else's did.
    assert {name: len(world.install_starts(name)) - before[name] for name in FIRST_THREE if name != SECOND} == \
        {CANARY: 0, THIRD: 0}


def test_turning_uninstall_on_destroy_on_reruns_no_installer(world: World):
    config = world.config()
    config["rollout"] = {**config["rollout"], "uninstallOnDestroy": True}
    world.write_config(config)
    changes = planned_changes(world.preview().out)
    assert changes == {("update", f"ascend-npu-{name}-on-destroy") for name in FIRST_THREE}, changes
    before = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    world.up()
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == before
    for name in FIRST_THREE:
        record = (world.nodes[name].root / "var/lib/ascend-npu/on-destroy.env").read_text()
        assert "ASCEND_ON_DESTROY=uninstall" in record.splitlines(), record


def test_with_uninstall_on_destroy_a_renamed_node_is_relabelled_and_never_uninstalled(world: World):
    config = world.config()
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


def test_with_uninstall_on_destroy_a_node_renamed_without_previous_names_is_never_uninstalled(world: World):
    """Without previousNames the new name's steps are created and the old name's deleted, on the same host: the old
    delete finds the host recorded under the new name and does nothing."""
    config = world.config()
    renamed = f"{SECOND}-b"
    for node in config["nodes"]:
        if node["name"] == SECOND:
            node["name"] = renamed
    register_nodes(world.kube, [n for n in config["nodes"] if n["name"] == renamed])
    world.write_config(config)
    changes = planned_changes(world.preview().out)
    assert ("delete", f"ascend-npu-{SECOND}-on-destroy") in changes and \
        ("create", f"ascend-npu-{renamed}-on-destroy") in changes, changes
    run = world.up()
    assert f"this host is now the stack's node {renamed}, not {SECOND}: nothing done" in run.out, run.out[-3000:]
    assert uninstalls(world, SECOND) == [] and world.installed(SECOND, "driver") == NEW["driver"]
    assert world.node_labels(renamed).get(READY) == "true" and READY not in world.node_labels(SECOND)


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
