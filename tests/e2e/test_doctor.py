"""`make doctor` on the stack of the first up (milestone `installed`): healthy, then each problem injected once and
found by its id and severity, with the exit code it makes; nodes it cannot reach; a support bundle.

Simulated besides the nodes and kubelets (world.py): a chip's health (the fake npu-smi), hand-edited version files and
engine configs, the driver's device files, a device plugin that registers nothing (testkit/simulated_devices.py), a
plugin container's restarts (its Pod status, written as the kubelet would).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import pytest

from components.cluster.common.node_labels import RESOURCE_NAMES
from components.doctor.findings import CLUSTER, from_json, human
from components.drain.node_state import SINCE, STATE
from components.kubeapi.client import wait_for
from engine.cache import REPO
from testkit.fakenode import ascend_files
from testkit.fakenode.packages import OLD
from tests.e2e import npu_workload as work
from tests.e2e.least_privilege import DOCTOR_RULES, docs_rules, kubeconfig_for
from tests.e2e.milestones import CANARY, SECOND, THIRD
from tests.e2e.world import NAMESPACE, STACK, World

BEGIN, END = "# ascend-npu: ascend runtime (begin)", "# ascend-npu: ascend runtime (end)"


def doctor(world: World, title: str, kubeconfig=None, *extra: str) -> tuple[int, set[tuple[str, str, str]], list[dict]]:
    """One doctor run as `make doctor STACK=e2e` runs it; its exit code, (id, severity, node) seen, findings."""
    env = {**world.env(), **({"KUBECONFIG": str(kubeconfig)} if kubeconfig else {})}
    done = subprocess.run([sys.executable, "-m", "components.doctor", "--stack", STACK, "--project",
                           str(world.project), "--json", *extra], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    report = json.loads(done.stdout)
    findings = report["findings"]
    assert report["exitCode"] == done.returncode
    assert all(f["page"] == f"docs/doctor/{f['id']}.md" and (REPO / f["page"]).exists() for f in findings)
    shown = human(STACK, report["nodes"], [from_json(f) for f in findings])
    with (world.root / "doctor.txt").open("a") as out:
        out.write(f"\n# {title} (exit {done.returncode})\n{done.stderr}{shown}\n")
    print(f"e2e: doctor, {title}: exit {done.returncode}\n{shown}", flush=True)
    return done.returncode, {(f["id"], f["severity"], f["node"]) for f in findings}, findings


@contextmanager
def restored(path):
    before = path.read_text()
    try:
        yield before
    finally:
        path.write_text(before)


@pytest.mark.milestone("installed")
def test_a_healthy_stack_has_no_finding(world: World):
    code, seen, _ = doctor(world, "healthy stack")
    assert (code, seen) == (0, set())


@pytest.mark.milestone("installed")
def test_an_unhealthy_chip(world: World):
    world.nodes[CANARY].knob("npu-smi-health", "3 Critical")
    try:
        code, seen, findings = doctor(world, "NPU 3 Critical on the canary")
    finally:
        world.nodes[CANARY].knob("npu-smi-health", None)
    assert (code, seen) == (1, {("chip-unhealthy", "error", CANARY)})
    assert "NPU 3 chip 0" in findings[0]["what"] and "Critical" in findings[0]["what"]


@pytest.mark.milestone("installed")
def test_a_driver_changed_by_hand_on_a_ready_node(world: World):
    root = world.nodes[THIRD].root
    ascend_files.write(root, "driver", "24.1.rc2", "aarch64")
    try:
        code, seen, findings = doctor(world, "driver replaced by hand on a ready node")
    finally:
        ascend_files.write(root, "driver", OLD["driver"], "aarch64")
    assert (code, seen) == (1, {("host-versions", "error", THIRD)})
    assert f"driver is 24.1.rc2, the stack wants {OLD['driver']}" in findings[0]["what"]
    assert "labelled ascend-npu.io/ready=true" in findings[0]["what"]


@pytest.mark.milestone("installed")
def test_the_ascend_runtime_missing_from_containerd(world: World):
    config = world.nodes[CANARY].root / "etc/containerd/config.toml"
    with restored(config) as text:
        head, rest = text.split(BEGIN, 1)
        config.write_text(head + rest.split(END, 1)[1])
        code, seen, _ = doctor(world, "ascend runtime removed from the canary's containerd config")
    assert (code, seen) == (1, {("engine-runtime-missing", "error", CANARY)})


@pytest.mark.milestone("installed")
def test_no_davinci_devices_on_the_host(world: World):
    root = world.nodes[SECOND].root
    ascend_files.remove_devices(root)
    try:
        code, seen, findings = doctor(world, "no /dev/davinci* on the 310P node")
    finally:
        ascend_files.write_devices(root)
    assert (code, seen) == (1, {("devices-missing", "error", SECOND)})
    assert "0 /dev/davinciN of 8" in findings[0]["what"]


def allocatable(world: World, name: str, resource: str) -> str:
    return world.kube.get(f"/api/v1/nodes/{name}")["status"].get("allocatable", {}).get(resource, "0")


@pytest.mark.milestone("installed")
def test_a_device_plugin_that_registers_nothing(world: World):
    resource = RESOURCE_NAMES["910B"]
    world.advertiser.failing.add(CANARY)
    try:
        wait_for("the canary advertising 0 NPUs", lambda: allocatable(world, CANARY, resource) == "0", 60)
        code, seen, _ = doctor(world, "device plugin reports 0 NPUs on the canary")
    finally:
        world.advertiser.failing.discard(CANARY)
        wait_for("the canary advertising 8 NPUs", lambda: allocatable(world, CANARY, resource) == "8", 60)
    assert (code, seen) == (1, {("allocatable-mismatch", "error", CANARY), ("plugin-socket-missing", "error", CANARY)})


def plugin_pod(world: World, node: str) -> dict:
    pods = list(world.kube.items(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/component%3D"
                                 f"device-plugin&fieldSelector=spec.nodeName%3D{node}"))
    assert len(pods) == 1, pods
    return pods[0]


def set_restarts(world: World, pod: dict, count: int, last: dict) -> None:
    statuses = [{**s, "restartCount": count, "lastState": last} for s in pod["status"]["containerStatuses"]]
    world.kube.request("PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}/status",
                       {"status": {"containerStatuses": statuses}}, content_type="application/merge-patch+json")


def ago(minutes: int) -> str:
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_exit(minutes: int) -> dict:
    return {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": ago(minutes + 1), "finishedAt": ago(minutes)}}


@pytest.mark.milestone("installed")
def test_a_restarting_device_plugin_with_its_last_error(world: World):
    set_restarts(world, plugin_pod(world, SECOND), 3, last_exit(2))
    try:
        code, seen, findings = doctor(world, "device plugin restarting on the 310P node")
        set_restarts(world, plugin_pod(world, SECOND), 3, last_exit(180))
        long_ago, seen_long_ago, _ = doctor(world, "device plugin restarted three hours ago")
    finally:
        set_restarts(world, plugin_pod(world, SECOND), 0, {})
    assert (code, seen) == (1, {("agent-restarting", "warning", SECOND)})
    assert "restarted 3 time(s), the last 2 min ago (within 60 min), exit 1 (Error)" in findings[0]["what"]
    assert (long_ago, seen_long_ago) == (0, set())


def pending_pod(world: World, name: str, resource: str) -> None:
    world.kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": work.WORKLOADS}})
    world.kube.create(f"/api/v1/namespaces/{work.WORKLOADS}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
            "name": "train", "image": "registry.example/ascend/train:1",
            "resources": {"limits": {resource: "1"}, "requests": {resource: "1"}}}]}})
    wait_for(f"{name} unschedulable", lambda: any(
        c.get("reason") == "Unschedulable" for c in (work.pod(world.kube, name) or {}).get("status", {}).get(
            "conditions", [])), 60)


@pytest.mark.milestone("installed")
def test_a_pod_asking_for_a_resource_name_no_node_advertises(world: World):
    pending_pod(world, "wrong-name", "huawei.com/Ascend910B")
    try:
        code, seen, findings = doctor(world, "a Pod asking for huawei.com/Ascend910B")
    finally:
        world.kube.delete(f"/api/v1/namespaces/{work.WORKLOADS}/pods/wrong-name")
    assert (code, seen) == (1, {("pending-resource-name", "warning", CLUSTER)})
    assert "huawei.com/Ascend910B, which no node advertises" in findings[0]["what"]


@pytest.mark.milestone("installed")
def test_a_pod_held_off_by_a_taint_it_does_not_tolerate(world: World):
    taint = {"key": "huawei.com/Ascend310P", "value": "true", "effect": "NoSchedule"}
    world.kube.merge_patch(f"/api/v1/nodes/{SECOND}", {"spec": {"taints": [taint]}})
    try:
        pending_pod(world, "no-toleration", RESOURCE_NAMES["310P"])
        code, seen, findings = doctor(world, "a 310P Pod without a toleration for the node's taint")
    finally:
        world.kube.delete(f"/api/v1/namespaces/{work.WORKLOADS}/pods/no-toleration")
        world.kube.merge_patch(f"/api/v1/nodes/{SECOND}", {"spec": {"taints": None}})
    assert (code, seen) == (1, {("pending-taint", "warning", CLUSTER)})
    assert "tainted without a toleration" in findings[0]["what"] and "huawei.com/Ascend310P=true:NoSchedule" in \
        findings[0]["what"]


@pytest.mark.milestone("installed")
def test_a_node_left_cordoned_by_an_upgrade_that_timed_out(world: World):
    world.kube.merge_patch(f"/api/v1/nodes/{CANARY}", {"metadata": {"labels": {STATE: "drain-failed"}},
                                                       "spec": {"unschedulable": True}})
    try:
        code, seen, _ = doctor(world, "the canary left cordoned by a drain that timed out")
    finally:
        world.kube.merge_patch(f"/api/v1/nodes/{CANARY}", {"metadata": {"labels": {STATE: None}},
                                                           "spec": {"unschedulable": None}})
    assert (code, seen) == (1, {("upgrade-stopped", "error", CANARY)})


def upgrade_state(world: World, state, since) -> None:
    world.kube.merge_patch(f"/api/v1/nodes/{CANARY}", {"metadata": {"labels": {STATE: state},
                                                                    "annotations": {SINCE: since}}})


@pytest.mark.milestone("installed")
def test_a_node_stuck_in_its_upgrade_state_past_its_limit_and_one_within_it(world: World):
    upgrade_state(world, "draining", ago(120))
    try:
        code, seen, findings = doctor(world, "the canary draining for two hours")
        upgrade_state(world, "draining", ago(1))
        under_way, seen_under_way, _ = doctor(world, "the canary draining for a minute")
    finally:
        upgrade_state(world, None, None)
    assert (code, seen) == (1, {("upgrade-stuck", "error", CANARY)})
    assert "draining since" in findings[0]["what"] and "(2 h 0 min)" in findings[0]["what"]
    assert "longer than rollout.drain.timeout (600 s)" in findings[0]["what"]
    assert (under_way, seen_under_way) == (0, {("upgrade-in-progress", "info", CANARY)})


@pytest.mark.milestone("installed")
def test_the_runtime_class_deleted(world: World):
    path = "/apis/node.k8s.io/v1/runtimeclasses/ascend"
    saved = world.kube.get(path)
    world.kube.delete(path)
    try:
        code, seen, _ = doctor(world, "RuntimeClass ascend deleted")
    finally:
        # Put back by the field manager that owned it (a server-side apply), so the program's next apply of the
        # object meets no conflict.
        manager = next(m["manager"] for m in saved["metadata"]["managedFields"] if m["operation"] == "Apply")
        meta = {k: v for k, v in saved["metadata"].items() if k in ("name", "labels", "annotations")}
        world.kube.request("PATCH", f"{path}?fieldManager={manager}&force=true", {**saved, "metadata": meta},
                           content_type="application/apply-patch+yaml")
    assert (code, seen) == (1, {("runtimeclass-missing", "error", CLUSTER)})


@pytest.mark.milestone("installed")
def test_nodes_that_refuse_the_key_are_unreachable_not_broken(world: World, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    code, seen, findings = doctor(world, "a key no node accepts", None, "--identity", str(other))
    assert (code, seen) == (3, {("node-unreachable", "unreachable", name) for name in (CANARY, SECOND, THIRD)})
    assert all("Permission denied" in f["what"] for f in findings)


def bundle_files(path) -> dict[str, str]:
    with tarfile.open(path) as tar:
        return {m.name.removeprefix("support-bundle/"): tar.extractfile(m).read().decode(errors="replace")
                for m in tar.getmembers()}


@pytest.mark.milestone("installed")
def test_the_doctor_and_its_bundle_need_no_more_than_the_docs_grant(world: World):
    rules = docs_rules(DOCTOR_RULES)
    kubeconfig = kubeconfig_for(world.kube, "doctor-reader", rules, world.kube.server, world.plane.pki / "ca.crt",
                                world.root, context=world.plane.context)
    target = world.root / "support-bundle.tar.gz"
    code, seen, _ = doctor(world, "as a ServiceAccount with the documented rules only, with a bundle", kubeconfig,
                           "--bundle", str(target))
    assert (code, seen) == (0, set())
    files = bundle_files(target)
    manifest = json.loads(files["manifest.json"])
    failed = {e["file"]: e["why"] for e in manifest["entries"] if not e["collected"]}
    # Missing: the one engine config a node does not have (daemon.json on containerd nodes), and the containers' logs,
    # which the simulated kubelet does not keep (the API answers, and the rules allow the request: no 403).
    assert {f for f in failed if "/engine/" not in f and not f.startswith("cluster/logs/")} == set(), failed
    assert not [why for why in failed.values() if "403" in why or "forbidden" in why.lower()], failed
    assert any(e["file"].startswith("cluster/logs/") for e in manifest["entries"])
    for name in (CANARY, SECOND, THIRD):
        for part in ("npu-smi-info.txt", "versions/driver.info", "versions/read-as-verify.json", "logs/run.log"):
            assert f"nodes/{name}/{part}" in files, (name, part)
        assert any(f.startswith(f"nodes/{name}/engine/") for f in files), name
    assert f"nodes/{THIRD}/engine/daemon.json" in files  # the Docker node
    assert "cluster/events/nodes.json" in files and f"cluster/events/{NAMESPACE}.json" in files
    assert json.loads(files["report.json"])["exitCode"] == 0
    key = world.pulumi("config", "get", "sshPrivateKey", "--stack", STACK, program=False).out
    assert "PRIVATE KEY" in key
    text = "".join(files.values())
    assert not [line for line in key.splitlines() if len(line.strip()) >= 16 and line.strip() in text]


@pytest.mark.milestone("installed")
def test_healthy_again_after_every_injection_was_undone(world: World):
    code, seen, _ = doctor(world, "healthy again")
    assert (code, seen) == (0, set())
    preview = world.pulumi("preview", "--stack", STACK, "--non-interactive", "--expect-no-changes", check=False)
    assert preview.code == 0, preview.out[-3000:]
