"""An Atlas A3 (910C) server on the fake node: its own packages, its board told apart on PCI, its chips counted.

Simulated: the A3's NPUs on PCI (19e5:d803, as the driver's scripts tell A3 from A2: github.com/hicann/driver
ef377e9 common.sh L361-362) and `npu-smi info` listing two chips per NPU id with a `Chip Phy-ID` column
(testkit/fakenode/npu_smi/a3.txt, a public dump).
"""
from __future__ import annotations

from testkit.fakenode.node import step_report
from testkit.fakenode.packages import CURRENT


def a3(node) -> None:
    node.knob("npu-smi-fixture", "a3")
    node.knob("pci-device", "d803")


def test_an_a3_node_installs_its_own_packages_and_verifies_counting_chips(node):
    a3(node)
    spec = node.spec(CURRENT, chip="910C")
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    files = [call["file"] for call in node.installer_calls()]
    assert "Atlas-A3-hdk-npu-driver_25.5.0_linux-aarch64.run" in files
    assert {"Atlas-A3-hdk-npu-firmware_7.8.0.5.216.run", "Ascend-cann-A3-ops_9.1.0_linux-aarch64.run"} <= set(files)
    verify = node.run_step(spec, "verify")
    assert verify.returncode == 0, verify.stderr
    report = step_report(verify.stdout)
    assert report["healthy"] is True and len(report["chips"]) == 8  # 4 NPU ids of 2 chips each in this dump


def test_an_a3_server_named_910b_is_refused_before_anything_runs_and_a_910c_that_is_not_too(node):
    a3(node)
    refused = node.run_step(node.spec(CURRENT), "install")
    assert refused.returncode != 0 and node.installer_calls() == []
    assert "this server's NPUs are Atlas A3 (lspci -n: 19e5:d803) but its chip is 910B; write chip: 910C" \
        in refused.stderr
    node.knob("pci-device", "d802")
    wrong = node.run_step(node.spec(CURRENT, chip="910C"), "install")
    assert wrong.returncode != 0 and "no NPU here is one (lspci -n lists no 19e5:d803)" in wrong.stderr


def test_an_a3_nodes_npu_network_is_one_address_per_chip_each_written_by_its_device_id(node):
    """hccn_tool -i takes a device id (ascend-deployer hccn.go L104-118): on A3 a chip's, 8 in this dump's 4 NPUs."""
    a3(node)
    addresses = [f"192.168.100.{11 + i}" for i in range(8)]
    network = {"addresses": addresses, "netmask": "255.255.255.0", "gateway": "192.168.100.1",
               "detectAddress": "192.168.100.1"}
    spec = node.spec(CURRENT, chip="910C", npu_network=network)
    assert node.run_step(spec, "install").returncode == 0
    result = node.run_step(spec, "npu_network")
    assert result.returncode == 0, result.stderr
    assert [p["npu"] for p in step_report(result.stdout)["npus"]] == list(range(8))
    assert "-i 7 -ip -s address 192.168.100.18 netmask 255.255.255.0" in (node.root / "fake/log/hccn.log").read_text()
