"""One `pulumi up` moves the stack from MindCluster 6.0.0's set to 26.1.0's, through the real CLI, behind the bastion:
each node drained, its NPU agents off before its firmware and driver are replaced, back once it verified.

Simulated besides the nodes, their power and the kubelets: the processes that hold a node's NPU device nodes, the
agents' Pods the kubelet runs (testkit/simulated_devices.py DeviceHolders), which the fake driver installer refuses to
upgrade under, as Huawei's does (testkit/fakenode/installer.py).
"""
from __future__ import annotations

import re
import threading
import time

import pytest

from components.cluster.common.node_labels import READY
from components.kubeapi.client import ApiError, wait_for
from testkit.fakenode.packages import CURRENT, NEW
from tests.e2e import milestones
from tests.e2e import npu_workload as work
from tests.e2e.milestones import CANARY
from tests.e2e.world import NAMESPACE, World

AGENTS = "app.kubernetes.io/part-of=ascend-npu"
KINDS = {"driver": CURRENT["driver"], "firmware": CURRENT["firmware"], "toolkit": CURRENT["cann"],
         "kernels": CURRENT["cann"], "dockerRuntime": "v" + CURRENT["dockerRuntime"]}
MOVE = re.compile(r'ASCEND_NPU_DRAIN_FOR: "driver ([^,]+), firmware ([^,"]+)[^"]*" => "driver ([^,]+), firmware '
                  r'([^,"]+)')


class AgentWatch:
    """Samples, every 0.1 s while `up` runs, how many NPU agent Pods each node has, and when that changed."""

    def __init__(self, world: World, names: list[str]):
        self.world, self.names = world, names
        self.changes: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            try:
                pods = self.world.kube.items(f"/api/v1/namespaces/{NAMESPACE}/pods", labelSelector=AGENTS)
            except ApiError:  # the API server busy for a moment: the next sample
                continue
            for name in self.names:
                count = sum(1 for p in pods if p["spec"].get("nodeName") == name and
                            p["metadata"]["labels"].get("app.kubernetes.io/component") in ("device-plugin", "exporter"))
                if not self.changes[name] or self.changes[name][-1][1] != count:
                    self.changes[name].append((time.time(), count))

    def __enter__(self) -> "AgentWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def count_at(self, name: str, moment: float) -> int:
        """How many agents the node had at MOMENT (the last sample before it)."""
        before = [count for at, count in self.changes[name] if at <= moment]
        return before[-1] if before else 0

    def absent_around(self, name: str, moment: float) -> bool:
        """Whether the node had no agent at MOMENT, with agents before it and again after it."""
        before = [count for at, count in self.changes[name] if at <= moment]
        after = [count for at, count in self.changes[name] if at > moment]
        return bool(before) and before[-1] == 0 and any(count for count in before) and bool(after) and after[-1] > 0


def servers(world: World) -> dict[str, str]:
    """Each stack node's fake server, by the host key it pins (the nodes were renamed on the way here)."""
    by_key = {fake.host_key: name for name, fake in world.nodes.items()}
    return {node["name"]: by_key[node["hostKey"]] for node in world.config()["nodes"]}


def agent_tags(world: World, name: str) -> set[str]:
    """The image tags of the NPU agents Running on the node."""
    running = world.kube.items(f"/api/v1/namespaces/{NAMESPACE}/pods", labelSelector=AGENTS)
    return {c["image"].split("@")[0].rsplit(":", 1)[1] for p in running if p["spec"].get("nodeName") == name
            and p.get("status", {}).get("phase") == "Running" for c in p["spec"]["containers"]}


def agent_note(world: World, name: str) -> str:
    """What the cluster says of a node without agents: its labels the DaemonSets select, and each DaemonSet's view."""
    labels = {k: v for k, v in world.node_labels(name).items() if k.startswith(("ascend-npu.io/", "accelerator"))}
    sets = [(d["metadata"]["name"], d["spec"]["template"]["spec"].get("nodeSelector"),
             d.get("status", {}).get("desiredNumberScheduled"))
            for d in world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets")]
    pods = [(p["metadata"]["name"], p.get("status", {}).get("phase"))
            for p in world.kube.items("/api/v1/pods", fieldSelector=f"spec.nodeName={name}")]
    return f"labels {labels}; daemonsets {sets}; pods {pods}"


def driver_started(world: World, server: str) -> float:
    """When the server's last driver installer run started (the fake installer's own log)."""
    log = world.nodes[server].root / "fake/log/installer-starts.log"
    return max(float(line.split()[0]) for line in log.read_text().splitlines() if line.endswith(" driver"))


@pytest.mark.milestone("behind-bastion", leaves="mindcluster-26")
def test_one_up_moves_every_node_to_mindcluster_26_1_0_with_its_agents_off_while_its_driver_changes(world: World):
    milestones.write_config(world, "mindcluster-26")
    nodes = servers(world)
    preview = world.preview("--diff").out
    moves = MOVE.findall(preview)
    print(f"e2e: preview of the move to MindCluster 26.1.0: {len(moves)} drains, e.g. {moves[:1]}", flush=True)
    assert moves and set(moves) == {(NEW["driver"], NEW["firmware"], CURRENT["driver"], CURRENT["firmware"])}, \
        preview[-5000:]
    assert "v26.1.0" in preview, preview[-5000:]
    started = work.utc_now()
    with AgentWatch(world, list(nodes)) as watch:
        run = world.up()
    had = [name for name in nodes if watch.changes[name] and watch.changes[name][0][1] > 0]
    assert CANARY in had, watch.changes
    for name, server in nodes.items():
        assert {kind: world.installed(server, kind) for kind in KINDS} == KINDS, name
        moment = driver_started(world, server)
        print(f"e2e: {name}: agents {watch.changes[name]}, driver installer started {moment:.3f}", flush=True)
        # Its agents (if it ran any: see the note printed below) had left when its driver installer started.
        assert watch.count_at(name, moment) == 0, (name, watch.changes[name], moment)
        if name in had:
            assert watch.absent_around(name, moment), (name, watch.changes[name], moment)
        else:
            print(f"e2e: {name} ran no NPU agent before this up: {agent_note(world, name)}", flush=True)
        assert not (world.nodes[server].root / "fake/log/device-holders.log").exists(), \
            f"{name}: the driver installer found its device nodes held"
        assert world.node_labels(name).get(READY) == "true" and not world.cordoned(name)
    for name in nodes:  # every node ends with its agents of the new release running
        wait_for(f"{name}'s NPU agents at v26.1.0", lambda name=name: agent_tags(world, name) == {"v26.1.0"}, 120)
    lines = world.timeline("MindCluster 6.0.0 -> 26.1.0, the canary", run.out, [CANARY], started)
    said = [line.split(None, 3)[3] for line in lines if f" {CANARY} " in line]
    found = [next((i for i, text in enumerate(said) if word in text), -1)
             for word in ("evicted", "NPU agents off", "installed", "verified", "NPU agents back", "uncordoned")]
    assert -1 not in found[1:] and [i for i in found if i >= 0] == sorted(i for i in found if i >= 0), said
    world.preview("--expect-no-changes")
