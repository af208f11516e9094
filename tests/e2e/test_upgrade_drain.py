"""The upgrade with drain through the real CLI: a budget holds the canary's training Pod, then lets it go; a failing
node stops the upgrade cordoned; the next `up` finishes it in place; the drain needs no more than the docs grant.
`make e2e K=drain` runs this scenario alone (from the first up).

Simulated besides the nodes and kubelets: the NPU work, a Pod holding one NPU that kwok runs
(tests/e2e/npu_workload.py).
"""
from __future__ import annotations

import re
import subprocess
import sys
import threading

import pytest

from components.cluster.common.node_labels import READY, RESOURCE_NAMES
from components.drain.contract import DrainCall
from components.drain.node_state import CORDONED_BY, SINCE, STATE
from components.kubeapi.client import wait_for
from engine.cache import REPO
from testkit.fakenode.packages import NEW, OLD
from tests.e2e import milestones
from tests.e2e import npu_workload as work
from tests.e2e.interrupt import Background, installer_runs, pending_operations, run_in_progress
from tests.e2e.least_privilege import DRAIN_RULES, docs_role, docs_rules, kubeconfig_for
from tests.e2e.milestones import CANARY, FIRST_THREE, SECOND, THIRD
from tests.e2e.world import CHIPS, World

DRAIN_REASON = re.compile(r'ASCEND_NPU_DRAIN_FOR: "driver (\S+), firmware (\S+?)[,"].* => "driver (\S+), firmware '
                          r'(\S+?)[,"]')


def node_events(world: World, name: str) -> list[dict]:
    """The Node's Events as `kubectl describe node` (v0.36.3 pkg/describe/describe.go L3461-3477) finds them."""
    uid = world.node_object(name)["metadata"]["uid"]
    selector = f"involvedObject.kind=Node,involvedObject.name={name},involvedObject.namespace=,involvedObject.uid={uid}"
    return sorted(world.kube.items("/api/v1/events", fieldSelector=selector),
                  key=lambda e: e["metadata"]["name"])


@pytest.mark.milestone("installed", leaves="upgrade-stopped")
def test_an_upgrade_drains_through_a_budget_and_a_failing_node_stays_cordoned(world: World):
    """A bare training Pod stops the drain until the stack opts in; then wave 0: the canary's training Pod is held
    by its budget, then let go; wave 1 fails and stays cordoned."""
    resource = RESOURCE_NAMES[CHIPS.get(CANARY, "910B")]
    trainer = work.run_npu_pod(world.kube, CANARY, resource, "train-0")
    work.guard(world.kube, min_available=1)
    without_opt_in = milestones.config_at(world, "upgrade-stopped")
    del without_opt_in["rollout"]["drain"]["force"]
    world.write_config(without_opt_in)
    starts = {name: len(world.install_starts(name)) for name in FIRST_THREE}
    refused = world.up(check=False)
    print("\n".join(line for line in refused.out.splitlines() if "e2e-npu-01" in line and "drain" in line))
    assert refused.code != 0
    assert "cannot evict Pods that declare no controller" in refused.out and "rollout.drain.force" in refused.out \
        and f"{work.WORKLOADS}/train-0" in refused.out, refused.out[-4000:]
    assert {name: len(world.install_starts(name)) for name in FIRST_THREE} == starts, "an installer ran"
    assert work.pod(world.kube, "train-0")["metadata"]["uid"] == trainer["metadata"]["uid"]
    assert world.cordoned(CANARY) and world.node_labels(CANARY).get(STATE) == "drain-failed"
    assert world.node_object(CANARY)["metadata"]["annotations"].get(SINCE, "").endswith("Z")
    said = [(e["reason"], e["type"]) for e in node_events(world, CANARY)]
    assert said[-2:] == [("AscendNpuDraining", "Normal"), ("AscendNpuDrainFailed", "Warning")], said
    world.write_config(milestones.config_at(world, "upgrade-stopped"))
    preview = world.preview("--diff").out  # which nodes will be drained, and why
    assert {("update", f"ascend-npu-{name}-drain") for name in FIRST_THREE} <= work.planned_changes(
        world.preview().out)
    assert DRAIN_REASON.findall(preview) == [(OLD["driver"], OLD["firmware"], NEW["driver"], NEW["firmware"])] * 6, \
        preview[-6000:]
    before_third = len(world.install_starts(THIRD))
    world.nodes[SECOND].knob("fail-driver", "1")
    result: dict = {}
    started, refused_before = work.utc_now(), work.evictions_refused(world.kube)
    upgrade = threading.Thread(target=lambda: result.update(run=world.up(check=False)))
    upgrade.start()
    try:
        # Two refusals of the budget seen by the API server (the drain retries every 5 s): the Pod stays, nothing
        # is installed; then the budget lets it go.
        wait_for("two evictions refused by the budget", lambda: not upgrade.is_alive() or
                 work.evictions_refused(world.kube) >= refused_before + 2, timeout=600)
        assert upgrade.is_alive(), "up ended before the budget refused two evictions"
        assert world.node_object(CANARY)["metadata"].get("labels", {}).get(STATE) == "draining"
        assert work.pod(world.kube, "train-0")["metadata"]["uid"] == trainer["metadata"]["uid"]
        assert world.cordoned(CANARY) and world.installed(CANARY, "driver") == OLD["driver"]
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
    assert world.installed(CANARY, "driver") == NEW["driver"] and not world.cordoned(CANARY)
    assert world.node_labels(CANARY).get(STATE) == "upgrade-done"
    assert [e["reason"] for e in node_events(world, CANARY)][-3:] == [
        "AscendNpuDraining", "AscendNpuUpgrading", "AscendNpuUpgradeDone"]
    assert world.installed(SECOND, "driver") == OLD["driver"]
    assert world.cordoned(SECOND) and world.node_labels(SECOND).get(STATE) == "upgrading"
    assert len(world.install_starts(THIRD)) == before_third, "a later wave ran although wave 1 failed"
    assert not world.cordoned(THIRD) and STATE not in world.node_labels(THIRD)
    assert world.node_labels(THIRD).get(READY) == "true", "the untouched node lost its labels"
    lines = world.timeline("upgrade, wave 0 held by a budget, wave 1 failing", run.out, FIRST_THREE, started)
    canary = [line.split(None, 3)[3] for line in lines if f" {CANARY} " in line]
    # The work leaves first, then the node's own NPU agents; they come back once the node verified.
    order = ["cordoned", "refused", "evicted", "NPU agents off", "installed", "verified", "NPU agents back",
             "uncordoned"]
    found = [next(i for i, text in enumerate(canary) if word in text) for word in order]
    assert found == sorted(found), canary


@pytest.mark.milestone("upgrade-stopped", leaves="upgraded")
def test_the_upgrade_then_finishes_in_place_and_nothing_is_uninstalled(world: World):
    """One ^C while wave 1's driver installer runs: the provider kills the running step's local command and with it
    its ssh (v1.2.1 local/commandOutputs.go L59: exec.CommandContext), the step fails, nothing later starts, nothing
    is pending; on the node the step carries on to its end, orphaned (run_step.sh ignores HUP and PIPE). Once it
    ended, the next `up` finishes the upgrade in place and runs no installer twice."""
    before = {name: installer_runs(world, name) for name in FIRST_THREE}
    world.nodes[SECOND].knob("hold-driver", "6")
    try:
        running = Background.up(world)
        running.once(f"{SECOND}'s driver installer running",
                     lambda: installer_runs(world, SECOND)[len(before[SECOND]):].count("driver") == 1)
        running.interrupt()
        stopped = running.finish()
    finally:
        world.nodes[SECOND].knob("hold-driver", None)
    assert stopped.code != 0, stopped.out[-3000:]
    wait_for("the orphaned install step to end", lambda: not run_in_progress(world, SECOND), 120)
    assert world.installed(SECOND, "driver") == NEW["driver"], "the installer did not run to its end"
    assert pending_operations(world) == [], "the first ^C left an operation pending"
    assert installer_runs(world, THIRD) == before[THIRD], "a later wave started after ^C"
    started = work.utc_now()
    run = world.up()
    ran = {name: installer_runs(world, name)[len(before[name]):] for name in FIRST_THREE}
    assert ran[SECOND].count("driver") == 1 and ran[THIRD].count("driver") == 1 and ran[CANARY] == [], ran
    for name in FIRST_THREE:
        assert {kind: world.installed(name, kind) for kind in ("driver", "firmware")} == \
            {"driver": NEW["driver"], "firmware": NEW["firmware"]}, name
        assert world.uninstalls(name) == []
        assert world.node_labels(name).get(READY) == "true"
        assert not world.cordoned(name) and CORDONED_BY not in world.node_object(name)["metadata"].get(
            "annotations", {}), name
    assert world.node_labels(SECOND).get(STATE) == world.node_labels(THIRD).get(STATE) == "upgrade-done"
    lines = world.timeline("upgrade finished, waves 1 and 2", run.out, (SECOND, THIRD), started)
    third = [line for line in lines if f" {THIRD} " in line]
    assert [w for w in ("cordoned", "drained", "NPU agents off", "installed", "verified", "NPU agents back",
                        "uncordoned") if not any(w in line for line in third)] == [], third
    # Wave 2 starts only once wave 1 is uncordoned: never two waves cordoned at once.
    second_done = max(line[:20] for line in lines if f" {SECOND} " in line and "uncordoned" in line)
    assert min(line[:20] for line in third) >= second_done


@pytest.mark.milestone("upgraded")
def test_the_drain_needs_no_more_than_the_docs_grant(world: World):
    """The drain run as a ServiceAccount bound to exactly the documented rules (its Events too); without
    pods/eviction it fails."""
    rules, role = docs_rules(DRAIN_RULES), docs_role(DRAIN_RULES)
    server, ca = world.kube.server, world.plane.pki / "ca.crt"

    def drain(kubeconfig, step: str) -> subprocess.CompletedProcess:
        call = DrainCall(step, THIRD, timeout=30, force=True, reason="driver x, firmware y")
        env = {**world.env(), "KUBECONFIG": str(kubeconfig), **call.environment(),
               "PULUMI_COMMAND_STDOUT": '{"for": "driver w, firmware y"}'}
        return subprocess.run([sys.executable, *call.argv()], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120)

    granted = kubeconfig_for(world.kube, "drain-granted", rules, server, ca, world.root, role=role)
    for step, said in (("before-host", "drained (0 Pod(s) evicted)"), ("after-host", "uncordoned")):
        done = drain(granted, step)
        assert done.returncode == 0 and said in done.stdout, done.stdout + done.stderr
        assert "not recorded" not in done.stdout, done.stdout
    assert not world.cordoned(THIRD)
    short = [r for r in rules if r["resources"] != ["pods/eviction"]]
    work.run_npu_pod(world.kube, THIRD, RESOURCE_NAMES["910B"], "train-3")
    try:
        denied = drain(kubeconfig_for(world.kube, "drain-short", short, server, ca, world.root, role=role),
                       "before-host")
    finally:
        world.kube.delete(f"/api/v1/namespaces/{work.WORKLOADS}/pods/train-3")
        drain(granted, "after-host")
    assert denied.returncode == 1 and 'cannot create resource "pods/eviction"' in denied.stderr, denied.stderr
    wait_for("train-3 gone", lambda: work.pod(world.kube, "train-3") is None, 60)
