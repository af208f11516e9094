"""The doctor's verdict: exit codes and their precedence, the human and JSON forms, the restart window on an injected
clock, the agents taken from the operand registry, the age of an upgrade state, a whole run that reaches nothing."""
from __future__ import annotations

import json
import shutil
import socket
from datetime import datetime, timedelta, timezone

from components.cluster.operands import REGISTRY, Operand, always
from components.doctor.__main__ import main
from components.doctor.checks import agents, reach, upgrade
from components.doctor.checks.npus import CHIP_UNHEALTHY
from components.doctor.checks.pending import RESOURCE_NAME
from components.doctor.checks.upgrade import UNDER_WAY
from components.doctor.findings import CLUSTER, as_json, exit_code, human
from components.drain import node_state
from tests.doctor.fixture_cases import dev_spec
from tests.stacks import ROOT, load_stack, patched, write_stack

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)
HOUR = timedelta(minutes=60)
BROKEN = CHIP_UNHEALTHY("npu-01", "NPU 3 chip 0 (0000:81:00.0) is Critical", "the runbook")
PENDING = RESOURCE_NAME(CLUSTER, "team-a/p asks for huawei.com/Ascend910B", "write huawei.com/Ascend910")
AWAY = reach.node_unreachable("npu-02", "SSH to root@10.0.0.12:22 failed: Connection refused")
BUSY = UNDER_WAY("npu-03", "ascend-npu.io/upgrade-state=upgrading since ...", "nothing")


def test_exit_codes_and_their_precedence():
    assert exit_code([]) == 0 and exit_code([BUSY]) == 0  # info changes nothing
    assert exit_code([BROKEN]) == 1 and exit_code([PENDING]) == 1
    assert exit_code([AWAY]) == 3 and exit_code([AWAY, BUSY]) == 3
    assert exit_code([AWAY, PENDING]) == 1  # a finding to act on outranks a node not checked


def test_the_human_form_shows_each_id_with_its_severity_and_page_worst_first():
    text = human("prod", 3, [AWAY, BUSY, PENDING, BROKEN])
    assert "findings (exit 1): 1 error, 1 warning, 1 unreachable, 1 info" in text
    heads = [line for line in text.splitlines() if line and not line.startswith(" ") and " (see " in line]
    assert heads == [
        "ERROR chip-unhealthy: a chip's health is not OK: the device plugin withholds it "
        "(see docs/doctor/chip-unhealthy.md)",
        "WARNING pending-resource-name: a Pod stays Pending on an NPU resource no node advertises "
        "(see docs/doctor/pending-resource-name.md)",
        "UNREACHABLE node-unreachable: the node could not be checked over SSH (see docs/doctor/node-unreachable.md)",
        "INFO upgrade-in-progress: an upgrade or removal is under way on this node, within its limit "
        "(see docs/doctor/upgrade-in-progress.md)"]
    assert "7." not in text


def test_the_json_form_carries_id_severity_and_page():
    doc = json.loads(as_json("prod", 3, [AWAY]))
    assert (doc["exitCode"], doc["healthy"]) == (3, False)
    assert {k: doc["findings"][0][k] for k in ("id", "severity", "page", "node")} == {
        "id": "node-unreachable", "severity": "unreachable", "page": "docs/doctor/node-unreachable.md",
        "node": "npu-02"}


def plugin(restarts: int, finished: str | None) -> dict:
    status = {"name": "device-plugin", "ready": True, "restartCount": restarts, "state": {"running": {}}}
    if finished:
        status["lastState"] = {"terminated": {"exitCode": 2, "reason": "Error", "finishedAt": finished}}
    return {"metadata": {"name": "dp-1", "namespace": "ascend-system"}, "spec": {"nodeName": "npu-01"},
            "status": {"containerStatuses": [status]}}


def restarts(pod: dict, now: datetime, window: timedelta = HOUR) -> list[str]:
    return [f.what for f in agents.check("npu-01", "device-plugin", [pod], True, now, window)]


def test_a_restart_counts_only_within_the_window_on_the_injected_clock():
    pod = plugin(4, "2026-12-04T11:15:00Z")
    (what,) = restarts(pod, NOW)
    assert "restarted 4 time(s), the last 45 min ago (within 60 min), exit 2 (Error)" in what
    assert restarts(pod, NOW + timedelta(minutes=16)) == []  # the same restart, an hour and a minute later
    assert restarts(pod, NOW + timedelta(minutes=16), timedelta(minutes=120)) != []  # a wider window
    assert restarts(plugin(4, None), NOW) == []  # no time to judge by
    assert restarts(plugin(0, None), NOW) == []


def test_the_agents_come_from_the_operand_registry():
    spec = dev_spec()
    assert [a.operand for a in agents.agents(spec)] == ["device-plugin", "exporter"]  # the validation Jobs are none
    extra = Operand("npu-scheduler-agent", always, workloads=lambda values: [{
        "kind": "DaemonSet", "metadata": {"name": "sched-agent", "namespace": "ascend-system"},
        "spec": {"selector": {"matchLabels": {"app": "sched-agent"}}}}])
    found = agents.agents(spec, REGISTRY.with_operand(extra))
    assert found[-1] == agents.Agent("npu-scheduler-agent", "ascend-system", ("app=sched-agent",))
    assert found[0].selectors == ("app.kubernetes.io/instance=ascend-device-plugin-910b,"
                                  "app.kubernetes.io/name=ascend-device-plugin",)


def dated(state: str, since: str | None) -> dict:
    meta = {"labels": {node_state.STATE: state}, "annotations": {node_state.SINCE: since} if since else {}}
    return {"metadata": meta, "spec": {"unschedulable": True}}


def test_an_upgrade_state_is_judged_by_its_age_against_its_limit():
    spec = dev_spec()
    assert upgrade.limit(spec, "upgrading") == (3600 + 1800 + 3600 + 1800 + 600 + 300 + 120,
                                                "the sum of rollout.timeouts")
    assert upgrade.limit(spec, "draining") == (600, "rollout.drain.timeout")
    (stuck,) = upgrade.check(spec, "npu-01", dated("draining", "2026-12-04T09:59:00Z"), NOW)
    assert (stuck.id, stuck.severity) == ("upgrade-stuck", "error")
    assert "draining since 2026-12-04T09:59:00Z (2 h 1 min), cordoned: longer than rollout.drain.timeout (600 s)" \
        in stuck.what
    assert [f.id for f in upgrade.check(spec, "npu-01", dated("upgrading", "2026-12-04T10:00:00Z"), NOW)] == [
        "upgrade-in-progress"]
    (undated,) = upgrade.check(spec, "npu-01", dated("leaving", "yesterday"), NOW)
    assert undated.id == "upgrade-state-undated" and "since when is unknown" in undated.what
    (failed,) = upgrade.check(spec, "npu-01", dated("drain-failed", None), NOW)
    assert failed.id == "upgrade-stopped" and "drain-failed, cordoned:" in failed.what
    assert upgrade.check(spec, "npu-01", dated("upgrade-done", None), NOW) == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_reachable_exits_3_with_each_node_and_the_api_unreachable(tmp_path, monkeypatch, capsys):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    port = closed_port()
    stack = patched(load_stack("dev"), {"set": {"ascend-npu:nodes[0].address": "127.0.0.1",
                                                "ascend-npu:nodes[1].address": "127.0.0.2",
                                                "ascend-npu:ssh.port": port}})
    write_stack(stack, tmp_path, "dev")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    code = main(["--stack", "dev", "--project", str(tmp_path), "--json", "--node-timeout", "10",
                 "--bundle", str(tmp_path / "bundle.tar.gz")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3 and doc["exitCode"] == 3
    assert sorted((f["id"], f["node"]) for f in doc["findings"]) == [
        ("api-unreachable", CLUSTER), ("node-unreachable", "dev-npu-01"), ("node-unreachable", "dev-npu-02")]
    assert "Connection refused" in doc["findings"][-1]["what"] or "Connection refused" in doc["findings"][0]["what"]
