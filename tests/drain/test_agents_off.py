"""The node's own NPU agents leave it before its driver or firmware is replaced and come back once it verified.

Simulated: the API server (tests/drain/memory_api.py) and the agents' DaemonSet controller, which marks their Pods
deleting once the node no longer carries the label they select (`ascend-npu.io/ready=true`); each then stops after
its own time on the drain's clock.
"""
from __future__ import annotations

import json

import pytest

from components.cluster.common.node_labels import READY
from components.drain import agents
from components.drain.__main__ import after_host, before_host, leave
from components.drain.contract import DrainCall
from components.drain.evict import DrainFailed
from tests.drain.memory_api import MemoryApi, node, pod

REASON, OLD_REASON = "driver 24.1.rc2, firmware 7.3.0.1.231", "driver 24.1.rc1, firmware 7.1.0.6.220"
DOCKER = ", docker runtime 6.0.0, default runtime runc"


def agent(component: str, stops_after: float = 5) -> dict:
    return pod(f"{component}-x1", npu=False, owner="DaemonSet", stops_after=stops_after,
               labels={"app.kubernetes.io/part-of": "ascend-npu", "app.kubernetes.io/component": component})


def controller(api: MemoryApi) -> None:
    """The DaemonSet controller: agents on a node without the ready label are deleted."""
    if api.nodes["npu-01"]["metadata"]["labels"].get(READY) == "true":
        return
    for found in api.pods.values():
        if found["metadata"]["labels"].get("app.kubernetes.io/part-of") == "ascend-npu":
            found["metadata"].setdefault("deletionTimestamp", "now")
            found["metadata"].setdefault("deletionGracePeriodSeconds", 30)
            found["metadata"].setdefault("_deleted_at", api.now)


def world(*extra: dict, stops_after: float = 5) -> MemoryApi:
    api = MemoryApi([node()], [agent("device-plugin", stops_after), agent("exporter", stops_after),
                               pod("web", npu=False, owner="DaemonSet", labels={"app": "fluent-bit"}), *extra])
    api.on_patch = controller
    return api


def call(step: str = "before-host", reason: str = REASON, **given) -> DrainCall:
    return DrainCall(**{"step": step, "node": "npu-01", "timeout": 120, "reason": reason, **given})


def run(step, api: MemoryApi, the_call: DrainCall) -> dict:
    return step(api, the_call, clock=api.clock, sleep=api.sleep)


@pytest.fixture
def previous(monkeypatch):
    def set_reason(reason: str | None):
        text = "" if reason is None else json.dumps({"node": "npu-01", "for": reason, "drained": True})
        monkeypatch.setenv("PULUMI_COMMAND_STDOUT", text)
    return set_reason


def test_a_new_driver_takes_the_agents_off_after_the_work_and_brings_them_back_after_verify(previous, capsys):
    api = world(pod("train"))
    previous(OLD_REASON)
    result = run(before_host, api, call())
    assert result == {"drained": True, "evicted": ["team-a/train"],
                      "agents_off": ["team-a/device-plugin-x1", "team-a/exporter-x1"]}
    said = capsys.readouterr().out
    assert said.index("evicted team-a/train") < said.index("NPU agents off for driver 24.1.rc2")
    assert READY not in api.nodes["npu-01"]["metadata"]["labels"]
    assert [name for _, name in api.pods] == ["web"], "another DaemonSet's Pod was touched"
    assert run(after_host, api, call("after-host"))["agents_back"] is True
    assert api.nodes["npu-01"]["metadata"]["labels"][READY] == "true"
    assert agents.TAKEN not in api.nodes["npu-01"]["metadata"]["annotations"]


@pytest.mark.parametrize("before, reason", [
    (REASON + ", docker runtime 6.0.RC3, default runtime runc", REASON + DOCKER),  # the runtime alone moves
    (REASON, REASON),  # nothing moves
])
def test_what_leaves_the_driver_and_firmware_alone_leaves_the_agents_running(previous, before, reason):
    api = world(pod("train"))
    previous(before)
    assert "agents_off" not in run(before_host, api, call(reason=reason))
    assert api.nodes["npu-01"]["metadata"]["labels"][READY] == "true" and len(api.pods) == 4 - (before != reason)


def test_agents_that_do_not_leave_stop_the_step_within_the_timeout_naming_them(previous):
    api = world(stops_after=400)  # they outlive their grace period's bound here only if the kubelet hangs
    api.on_patch = None  # no controller: nothing removes them
    previous(OLD_REASON)
    with pytest.raises(DrainFailed) as failed:
        run(before_host, api, call())
    assert "the NPU agents were still on the node: team-a/device-plugin-x1, team-a/exporter-x1" in str(failed.value)
    assert "Not within 120 s (rollout.drain.timeout); its host step did not run" in str(failed.value)
    assert api.now >= 120
    # The next run waits for them again, without taking the label twice; once they go, it goes on.
    api.on_patch = controller
    controller(api)
    assert run(before_host, api, call())["agents_off"] == ["team-a/device-plugin-x1", "team-a/exporter-x1"]


def test_a_first_install_on_a_node_never_labelled_ready_waits_for_nothing_and_labels_nothing(previous):
    api = MemoryApi([node()], [])
    del api.nodes["npu-01"]["metadata"]["labels"][READY]
    previous(None)
    assert run(before_host, api, call()) == {"drained": False}
    assert run(after_host, api, call("after-host")) == {"uncordoned": False}
    assert READY not in api.nodes["npu-01"]["metadata"]["labels"]


def test_a_node_leaving_with_its_software_takes_its_agents_off_and_keeps_no_mark():
    api = world()
    result = run(leave, api, call("leave", evict=True, force=True))
    assert result["agents_off"] == ["team-a/device-plugin-x1", "team-a/exporter-x1"]
    assert agents.TAKEN not in api.nodes["npu-01"]["metadata"]["annotations"]


def test_the_drains_ready_label_is_the_one_the_agents_select():
    assert agents.READY == READY


def test_the_drain_and_the_label_step_name_one_field_manager():
    from components.labels.__main__ import DRAIN_MANAGER
    assert agents.MANAGER == DRAIN_MANAGER
