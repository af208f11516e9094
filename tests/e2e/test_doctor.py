"""`make doctor` on the stack of the first up (milestone `installed`): healthy, then each field symptom injected
once and found.

Simulated besides the nodes and kubelets (world.py): a chip's health (the fake npu-smi), hand-edited version files and
engine configs, the driver's device files, a device plugin that registers nothing (simulated_devices.py), a plugin
container's restarts (its Pod status, written as the kubelet would).
"""
from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager

import pytest

from components.cluster.common.node_labels import RESOURCE_NAMES
from components.doctor.findings import CLUSTER, Finding, human
from components.drain.node_state import STATE
from components.kubeapi.client import wait_for
from engine.cache import REPO
from testkit.fakenode import ascend_files
from testkit.fakenode.packages import OLD
from tests.e2e import npu_workload as work
from tests.e2e.least_privilege import DOCTOR_RULES, docs_rules, kubeconfig_for
from tests.e2e.milestones import CANARY, SECOND, THIRD
from tests.e2e.world import NAMESPACE, STACK, World

BEGIN, END = "# ascend-npu: ascend runtime (begin)", "# ascend-npu: ascend runtime (end)"


def doctor(world: World, title: str, kubeconfig=None) -> tuple[int, set[tuple[str, str, str]], list[dict]]:
    """One doctor run as `make doctor STACK=e2e` runs it; its exit code, (symptom, node, check) seen, findings."""
    env = {**world.env(), **({"KUBECONFIG": str(kubeconfig)} if kubeconfig else {})}
    done = subprocess.run([sys.executable, "-m", "components.doctor", "--stack", STACK, "--project",
                           str(world.project), "--json"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    report = json.loads(done.stdout)
    findings = report["findings"]
    shown = human(STACK, report["nodes"], [Finding(**{k: f[k] for k in ("symptom", "node", "check", "what", "fix")})
                                           for f in findings])
    with (world.root / "doctor.txt").open("a") as out:
        out.write(f"\n# {title} (exit {done.returncode})\n{done.stderr}{shown}\n")
    print(f"e2e: doctor, {title}: exit {done.returncode}\n{shown}", flush=True)
    return done.returncode, {(f["symptom"], f["node"], f["check"]) for f in findings}, findings


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
    assert (code, seen) == (1, {("7.1", CANARY, "npu-smi")})
    assert "NPU 3 chip 0" in findings[0]["what"] and "Critical" in findings[0]["what"]


@pytest.mark.milestone("installed")
def test_a_driver_changed_by_hand_on_a_ready_node(world: World):
    root = world.nodes[THIRD].root
    ascend_files.write(root, "driver", "24.1.rc2", "aarch64")
    try:
        code, seen, findings = doctor(world, "driver replaced by hand on a ready node")
    finally:
        ascend_files.write(root, "driver", OLD["driver"], "aarch64")
    assert (code, seen) == (1, {("7.4", THIRD, "versions")})
    assert f"driver is 24.1.rc2, the stack wants {OLD['driver']}" in findings[0]["what"]
    assert "labelled ascend-npu.io/ready=true" in findings[0]["what"]


@pytest.mark.milestone("installed")
def test_the_ascend_runtime_missing_from_containerd(world: World):
    config = world.nodes[CANARY].root / "etc/containerd/config.toml"
    with restored(config) as text:
        head, rest = text.split(BEGIN, 1)
        config.write_text(head + rest.split(END, 1)[1])
        code, seen, _ = doctor(world, "ascend runtime removed from the canary's containerd config")
    assert (code, seen) == (1, {("7.3", CANARY, "engine")})


@pytest.mark.milestone("installed")
def test_no_davinci_devices_on_the_host(world: World):
    root = world.nodes[SECOND].root
    ascend_files.remove_devices(root)
    try:
        code, seen, findings = doctor(world, "no /dev/davinci* on the 310P node")
    finally:
        ascend_files.write_devices(root)
    assert (code, seen) == (1, {("7.3", SECOND, "devices")})
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
    assert (code, seen) == (1, {("7.1", CANARY, "allocatable"), ("7.1", CANARY, "plugin-socket")})


def plugin_pod(world: World, node: str) -> dict:
    pods = list(world.kube.items(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/component%3D"
                                 f"device-plugin&fieldSelector=spec.nodeName%3D{node}"))
    assert len(pods) == 1, pods
    return pods[0]


def set_restarts(world: World, pod: dict, count: int, last: dict) -> None:
    statuses = [{**s, "restartCount": count, "lastState": last} for s in pod["status"]["containerStatuses"]]
    world.kube.request("PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}/status",
                       {"status": {"containerStatuses": statuses}}, content_type="application/merge-patch+json")


@pytest.mark.milestone("installed")
def test_a_restarting_device_plugin_with_its_last_error(world: World):
    pod = plugin_pod(world, SECOND)
    last = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-12-02T05:00:00Z",
                           "finishedAt": "2026-12-02T05:00:05Z"}}
    set_restarts(world, pod, 3, last)
    try:
        code, seen, findings = doctor(world, "device plugin restarting on the 310P node")
    finally:
        set_restarts(world, plugin_pod(world, SECOND), 0, {})
    assert (code, seen) == (1, {("7.1", SECOND, "device-plugin")})
    assert "restarted 3 time(s), last exit 1 (Error)" in findings[0]["what"]


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
    assert (code, seen) == (1, {("7.2", CLUSTER, "pending")})
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
    assert (code, seen) == (1, {("7.2", CLUSTER, "pending")})
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
    assert (code, seen) == (1, {("upgrade", CANARY, "drain")})


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
    assert (code, seen) == (1, {("7.3", CLUSTER, "runtimeclass")})


@pytest.mark.milestone("installed")
def test_the_doctor_needs_no_more_than_the_docs_grant(world: World):
    rules = docs_rules(DOCTOR_RULES)
    kubeconfig = kubeconfig_for(world.kube, "doctor-reader", rules, world.kube.server, world.plane.pki / "ca.crt",
                                world.root, context=world.plane.context)
    code, seen, _ = doctor(world, "as a ServiceAccount with the documented rules only", kubeconfig)
    assert (code, seen) == (0, set())


@pytest.mark.milestone("installed")
def test_healthy_again_after_every_injection_was_undone(world: World):
    code, seen, _ = doctor(world, "healthy again")
    assert (code, seen) == (0, set())
    preview = world.pulumi("preview", "--stack", STACK, "--non-interactive", "--expect-no-changes", check=False)
    assert preview.code == 0, preview.out[-3000:]
