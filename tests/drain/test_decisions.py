"""When the drain steps cordon, evict, wait and uncordon, what they refuse, and what they leave on the Node.

Simulated: the API server (tests/drain/memory_api.py): an in-memory store whose evictions a budget may refuse and
whose Pods stop after a time, on a clock that moves only when the drain sleeps.
"""
from __future__ import annotations

import json

import pytest

from components.drain import node_state as state
from components.drain.__main__ import after_host, before_host, leave
from components.drain.contract import DrainCall
from components.drain.evict import DrainFailed
from tests.drain.memory_api import MemoryApi, node, pod

REASON, OLD_REASON = "driver 24.1.rc2, firmware 7.3.0.1.231", "driver 24.1.rc1, firmware 7.1.0.6.220"


def call(step: str = "before-host", **given) -> DrainCall:
    return DrainCall(**{"step": step, "node": "npu-01", "timeout": 600, "reason": REASON, **given})


def run(step, api: MemoryApi, the_call: DrainCall) -> dict:
    return step(api, the_call, clock=api.clock, sleep=api.sleep)


@pytest.fixture
def previous(monkeypatch):
    def set_reason(reason: str | None):
        text = "" if reason is None else "...\n" + json.dumps({"node": "npu-01", "for": reason, "drained": False})
        monkeypatch.setenv("PULUMI_COMMAND_STDOUT", text)
    return set_reason


def labels(api: MemoryApi) -> dict:
    return api.nodes["npu-01"]["metadata"]["labels"]


def test_a_node_not_in_the_cluster_is_installed_without_a_drain(previous, capsys):
    previous(None)
    assert run(before_host, MemoryApi([], []), call()) == {"drained": False}
    assert "not in the cluster yet: its host steps run without a drain" in capsys.readouterr().out


def test_a_first_install_without_npu_pods_and_an_unchanged_reason_drain_nothing(previous):
    api = MemoryApi([node()], [pod("web", npu=False)])
    previous(None)
    assert run(before_host, api, call()) == {"drained": False}
    previous(REASON)  # a renamed node, a new timeout: the reason is the same
    api.pods[("team-a", "train")] = pod("train")
    assert run(before_host, api, call()) == {"drained": False}
    assert not api.nodes["npu-01"]["spec"] and api.evicted() == [] and api.events == []


def test_a_new_driver_cordons_evicts_npu_and_selected_pods_only_then_uncordons(previous):
    api = MemoryApi([node()], [pod("train"), pod("web", npu=False), pod("infer", npu=False, labels={"app": "infer"}),
                               pod("plugin", owner="DaemonSet")])
    previous(OLD_REASON)
    assert run(before_host, api, call(selector="app=infer")) == {"drained": True,
                                                                 "evicted": ["team-a/infer", "team-a/train"]}
    drained = api.nodes["npu-01"]
    assert drained["spec"]["unschedulable"] and labels(api)[state.STATE] == state.UPGRADING
    assert drained["metadata"]["annotations"][state.CORDONED_BY] == state.OWNER
    assert sorted(name for _, name in api.pods) == ["plugin", "web"]
    assert run(after_host, api, call("after-host")) == {"uncordoned": True, "agents_back": True}
    done = api.nodes["npu-01"]
    assert "unschedulable" not in done["spec"] and state.CORDONED_BY not in done["metadata"]["annotations"]
    assert labels(api)[state.STATE] == state.DONE
    assert [e["reason"] for e in api.events] == ["AscendNpuDraining", "AscendNpuUpgrading", "AscendNpuUpgradeDone"]
    assert {e["involvedObject"]["uid"] for e in api.events} == {"uid-npu-01"}


def test_each_state_carries_when_it_began_and_leaving_the_state_removes_it(previous):
    api = MemoryApi([node()], [pod("train", stops_after=40)])
    previous(OLD_REASON)
    began = []
    api.on_patch = lambda a: began.append((labels(a).get(state.STATE),
                                           a.nodes["npu-01"]["metadata"]["annotations"].get(state.SINCE)))
    run(before_host, api, call())
    # the third patch takes the agents off (its ready label), in the state the drain left
    assert [s for s, _ in began] == [state.DRAINING, state.UPGRADING, state.UPGRADING]
    assert all(since and since.endswith("Z") for _, since in began)
    run(leave, api, call("leave", evict=False))
    assert state.SINCE not in api.nodes["npu-01"]["metadata"]["annotations"]


def test_a_pod_scheduled_before_the_cordon_took_effect_is_evicted_too(previous):
    """Cordon, then list (kubectl's order): a Pod the scheduler placed while the drain started is not missed."""
    api = MemoryApi([node()], [pod("train")])
    previous(OLD_REASON)

    def late_pod(a: MemoryApi) -> None:
        a.pods.setdefault(("team-a", "late"), pod("late"))
    api.on_patch = late_pod
    assert run(before_host, api, call())["evicted"] == ["team-a/late", "team-a/train"]


def test_a_node_someone_else_cordoned_stays_cordoned(previous):
    api = MemoryApi([node(unschedulable=True)], [pod("train")])
    previous(OLD_REASON)
    run(before_host, api, call())
    assert run(after_host, api, call("after-host")) == {"uncordoned": False, "agents_back": True}
    assert api.nodes["npu-01"]["spec"]["unschedulable"]


def test_a_rerun_of_a_finished_uncordon_changes_nothing(previous):
    api = MemoryApi([node()], [])
    api.nodes["npu-01"]["metadata"]["labels"][state.STATE] = state.DONE
    before = json.dumps(api.nodes, sort_keys=True)
    assert run(after_host, api, call("after-host")) == {"uncordoned": False}
    assert json.dumps(api.nodes, sort_keys=True) == before and api.events == []


@pytest.mark.parametrize("the_pod, named, opt_in", [
    (pod("solo", owner=None), "Pods that declare no controller", {"force": True}),
    (pod("scratch", empty_dir=True), "Pods with emptyDir volumes", {"delete_empty_dir_data": True}),
])
def test_a_bare_or_emptydir_pod_is_refused_naming_it_then_evicted_once_opted_in(previous, the_pod, named, opt_in):
    api = MemoryApi([node()], [the_pod, pod("train")])
    previous(OLD_REASON)
    with pytest.raises(DrainFailed) as refused:
        run(before_host, api, call())
    name = f"team-a/{the_pod['metadata']['name']}"
    assert named in str(refused.value) and name in str(refused.value)
    assert ("rollout.drain.force" if "force" in opt_in else "rollout.drain.deleteEmptyDirData") in str(refused.value)
    assert api.evicted() == [], "nothing is evicted while any Pod is refused"
    assert api.nodes["npu-01"]["spec"]["unschedulable"] and labels(api)[state.STATE] == state.DRAIN_FAILED
    assert api.events[-1]["type"] == "Warning" and name in api.events[-1]["message"]
    assert name in run(before_host, api, call(**opt_in))["evicted"]


def test_a_resumed_drain_waits_for_the_pod_still_checkpointing_and_does_not_evict_it_again(previous, capsys):
    """The first drain times out while a Pod with a long grace period checkpoints; the next one awaits it."""
    api = MemoryApi([node()], [pod("train", grace=3600, stops_after=900)])
    previous(OLD_REASON)
    with pytest.raises(DrainFailed) as first:
        run(before_host, api, call(timeout=600))
    assert "team-a/train still terminating" in str(first.value)
    assert labels(api)[state.STATE] == state.DRAIN_FAILED and len(api.evictions) == 1
    # The failed run's output is not recorded: the next `up` still sees the old reason.
    assert run(before_host, api, call(timeout=600)) == {"drained": True, "evicted": []}
    assert len(api.evictions) == 1, "a terminating Pod was evicted again (its grace period could be cut short)"
    assert "waiting for team-a/train, terminating since" in capsys.readouterr().out
    assert labels(api)[state.STATE] == state.UPGRADING


def test_a_grace_period_override_travels_in_the_eviction(previous):
    api = MemoryApi([node()], [pod("train", grace=3600, stops_after=3600)])
    previous(OLD_REASON)
    run(before_host, api, call(grace_period=120))
    assert api.evictions[0]["deleteOptions"] == {"gracePeriodSeconds": 120} and api.now <= 125


def test_leaving_with_software_kept_only_removes_the_marks_and_its_own_cordon():
    api = MemoryApi([node()], [pod("train")])
    api.nodes["npu-01"]["metadata"]["labels"][state.STATE] = state.DRAIN_FAILED
    api.nodes["npu-01"]["metadata"]["annotations"][state.CORDONED_BY] = state.OWNER
    api.nodes["npu-01"]["spec"]["unschedulable"] = True
    assert run(leave, api, call("leave", evict=False)) == {"drained": False, "evicted": []}
    left = api.nodes["npu-01"]
    assert ("team-a", "train") in api.pods and api.evicted() == []
    assert state.STATE not in left["metadata"]["labels"] and "unschedulable" not in left["spec"]
    assert api.events[-1]["reason"] == "AscendNpuLeft"


def test_leaving_before_an_uninstall_evicts_then_removes_the_marks():
    api = MemoryApi([node()], [pod("train")])
    api.nodes["npu-01"]["metadata"]["labels"][state.STATE] = state.DONE
    assert run(leave, api, call("leave", evict=True)) == {"drained": True, "evicted": ["team-a/train"]}
    left = api.nodes["npu-01"]
    assert state.STATE not in left["metadata"]["labels"] and "unschedulable" not in left["spec"]
    assert [e["reason"] for e in api.events] == ["AscendNpuLeaving", "AscendNpuLeft"]
