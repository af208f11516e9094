"""An Atlas A3 (910C) node joins the stack through the real CLI, behind the bastion: its own packages installed, its
chips verified, MindCluster's labels on it, and its device plugin advertising what MindCluster's advertises on A3.

Simulated besides the servers, their power and the kubelets: the A3's NPUs on PCI (19e5:d803) and its `npu-smi info`
(testkit/fakenode/npu_smi/a3.txt, a public dump: two chips per NPU id), and the kubelet's device manager
(testkit/simulated_devices.py), which reports the chips the plugin registers as `huawei.com/Ascend910`.
"""
from __future__ import annotations

import json

import pytest

from components.cluster.common.node_labels import ACCELERATOR, ACCELERATOR_TYPE, CHIP, READY
from components.kubeapi.client import wait_for
from testkit.fakenode.packages import CURRENT
from tests.e2e import milestones
from tests.e2e.milestones import A3_NODE, FOURTH
from tests.e2e.world import NAMESPACE, STACK, World

A3_FILES = {"Atlas-A3-hdk-npu-driver_25.5.0_linux-aarch64.run", "Atlas-A3-hdk-npu-firmware_7.8.0.5.216.run",
            "Ascend-cann-A3-ops_9.1.0_linux-aarch64.run"}


@pytest.mark.milestone("mindcluster-26", leaves="a3-added")
def test_an_atlas_a3_node_joins_with_its_own_packages_labels_and_advertised_chips(world: World):
    milestones.write_config(world, "a3-added")
    run = world.up()
    server = world.nodes[FOURTH]
    ran = {call["file"] for call in server.installer_calls()}
    assert A3_FILES <= ran, ran
    assert world.installed(FOURTH, "driver") == CURRENT["driver"] and world.installed(FOURTH, "kernels") == \
        CURRENT["cann"]
    verified = json.loads(world.pulumi("stack", "output", "nodes", "--json", "--stack", STACK, program=False).out)
    a3 = verified[A3_NODE]
    print(f"e2e: the A3 node's verify: {json.dumps(a3, sort_keys=True)[:600]}", flush=True)
    assert a3["healthy"] is True and len(a3["chips"]) == 8, a3
    labels = world.node_labels(A3_NODE)
    assert (labels[ACCELERATOR], labels[ACCELERATOR_TYPE], labels[CHIP], labels[READY]) == \
        ("huawei-Ascend910", "module-a3-8", "910C", "true"), labels
    wait_for("the A3 node's device plugin registered", lambda: world.node_object(A3_NODE)["status"].get(
        "allocatable", {}).get("huawei.com/Ascend910") == "8", 120)
    allocatable = world.node_object(A3_NODE)["status"]["allocatable"]
    print(f"e2e: the A3 node's allocatable: {json.dumps(allocatable, sort_keys=True)}", flush=True)
    plugins = [p for p in world.kube.items(f"/api/v1/namespaces/{NAMESPACE}/pods",
                                           labelSelector="app.kubernetes.io/component=device-plugin")
               if p["spec"].get("nodeName") == A3_NODE]
    assert [p["metadata"]["name"].rsplit("-", 1)[0] for p in plugins] == ["ascend-device-plugin-910c"], plugins
    mounts = {m["mountPath"] for m in plugins[0]["spec"]["containers"][0]["volumeMounts"]}
    assert "/var/log/lingqu" in mounts
    assert "Traceback" not in run.out
    world.preview("--expect-no-changes")
