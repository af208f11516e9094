"""The NPU network step over real SSH on the fake node: written where it differs, checked, idempotent, and refused.

Simulated: the NPUs and their network ports (testkit/fakenode/hccn_tool.py, in the output forms the real hccn_tool
prints, with links that can be down and detection addresses that can be unreachable).
"""
from __future__ import annotations

import json

from testkit.fakenode.node import step_report
from testkit.fakenode.packages import NEW
from testkit.fakenode.sandbox import LOGS

ADDRESSES = [f"192.168.100.{11 + i}" for i in range(8)]
NETWORK = {"addresses": ADDRESSES, "netmask": "255.255.255.0", "gateway": "192.168.100.1",
           "detectAddress": "192.168.100.1"}


def spec(node, network=None, timeout=4):
    return node.spec(npu_network=network or NETWORK, rollout={"timeouts": {"npuNetwork": timeout}})


def writes(node) -> list[str]:
    """The hccn_tool calls that changed something, since the log was last cleared."""
    log = node.root / LOGS / "hccn.log"
    return [line for line in log.read_text().splitlines() if " -s " in f" {line} "] if log.exists() else []


def ports(node) -> dict:
    return json.loads((node.root / "fake/hccn.json").read_text())


def test_a_fresh_node_gets_every_npu_written_and_checked(node):
    node.preinstall(NEW)
    result = node.run_step(spec(node), "npu_network")
    assert result.returncode == 0, result.stderr
    report = step_report(result.stdout)
    assert report["ready"] is True and [p["npu"] for p in report["npus"]] == list(range(8))
    assert all(p["link"] == "UP" and p["netHealth"] == "Success" and p["shows"] == p["address"]
               for p in report["npus"])
    assert ports(node)["3"] == {"address": "192.168.100.14", "netmask": "255.255.255.0", "gateway": "192.168.100.1",
                                "detect": "192.168.100.1"}
    # Exactly the forms ascend-deployer runs: address and netmask, gateway, detection address, per NPU.
    assert writes(node)[:3] == ["-i 0 -ip -s address 192.168.100.11 netmask 255.255.255.0",
                                "-i 0 -gateway -s gateway 192.168.100.1", "-i 0 -netdetect -s address 192.168.100.1"]
    assert len(writes(node)) == 24 and "NPU 7: address 192.168.100.18 netmask 255.255.255.0\n" in result.stdout


def test_a_rerun_writes_nothing_and_a_changed_address_writes_that_npu_alone(node):
    node.preinstall(NEW)
    assert node.run_step(spec(node), "npu_network").returncode == 0
    node.clear_logs()
    again = node.run_step(spec(node), "npu_network")
    assert again.returncode == 0 and writes(node) == []
    moved = dict(NETWORK, addresses=ADDRESSES[:5] + ["192.168.100.99"] + ADDRESSES[6:])
    node.clear_logs()
    changed = node.run_step(spec(node, moved), "npu_network")
    assert changed.returncode == 0, changed.stderr
    assert writes(node) == ["-i 5 -ip -s address 192.168.100.99 netmask 255.255.255.0"]
    assert "NPU 5: address 192.168.100.99 netmask 255.255.255.0 (was 192.168.100.16/255.255.255.0)" in changed.stdout


def test_a_link_down_and_an_unreachable_probe_fail_the_step_naming_each_npu(node):
    node.preinstall(NEW)
    node.knob("hccn-link-down", "2")
    node.knob("hccn-unreachable", "6")
    result = node.run_step(spec(node, timeout=2), "npu_network")
    assert result.returncode == 1
    assert "[npu-network] NPU 2: link DOWN; detection address not answering (net health status: Unreachable)" \
        in result.stderr
    assert "[npu-network] NPU 6: detection address not answering (net health status: Unreachable)" in result.stderr
    report = step_report(result.stdout)
    assert report["ready"] is False and [p["npu"] for p in report["npus"] if not p["ready"]] == [2, 6]


def test_a_node_without_the_driver_is_refused_before_anything_is_written(node):
    result = node.run_step(spec(node), "npu_network")
    assert result.returncode == 1
    assert "no hccn_tool at /usr/local/Ascend/driver/tools/hccn_tool: the NPU driver installs it" in result.stderr
    assert not (node.root / "fake/hccn.json").exists()


def test_a_setting_hccn_tool_refuses_stops_the_step_naming_it(node):
    node.preinstall(NEW)
    node.knob("hccn-set-fails", "0")
    result = node.run_step(spec(node), "npu_network")
    assert result.returncode == 1
    assert "NPU 0: hccn_tool could not set address 192.168.100.11 netmask 255.255.255.0" in result.stderr
