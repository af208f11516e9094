"""The verify step: versions read back, every npu-smi format parsed, unhealthy or missing chips refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import testkit.fakenode
from testkit.fakenode.node import step_report
from testkit.fakenode.packages import NEW, OLD
from tests.host.python_parts import part

FIXTURES = Path(testkit.fakenode.__file__).parent / "npu_smi"
# fixture: (chip count, first chip, last chip) as verify must report them
EXPECTED = {
    "910b": (8, {"npu": 0, "chip": 0, "name": "910B2", "health": "OK", "busId": "0000:C1:00.0"},
             {"npu": 7, "chip": 0, "name": "910B2", "health": "OK", "busId": "0000:82:00.0"}),
    "910b-hbm-nospace": (8, {"npu": 0, "chip": 0, "name": "910B4", "health": "OK", "busId": "0000:C1:00.0"},
                         {"npu": 7, "chip": 0, "name": "910B4", "health": "OK", "busId": "0000:82:00.0"}),
    "910b-wide": (8, {"npu": 0, "chip": 0, "name": "910B3", "health": "OK", "busId": "0000:C1:00.0"},
                  {"npu": 7, "chip": 0, "name": "910B3", "health": "OK", "busId": "0000:82:00.0"}),
    "310p": (4, {"npu": 2, "chip": 0, "name": "310P3", "health": "OK", "busId": "0000:01:00.0"},
             {"npu": 3, "chip": 1, "name": "310P3", "health": "OK", "busId": "0000:02:00.0"}),
    "310p-duo": (8, {"npu": 1, "chip": 0, "name": "310P3", "health": "OK", "busId": "0000:01:00.0"},
                 {"npu": 4, "chip": 1, "name": "310P3", "health": "OK", "busId": "0000:82:00.0"}),
    "a3": (8, {"npu": 0, "chip": 0, "name": "Ascend910", "health": "OK", "busId": "0000:9D:00.0"},
           {"npu": 3, "chip": 1, "name": "Ascend910", "health": "OK", "busId": "0000:B7:00.0"}),
}


def parse_locally(text: str) -> list[dict]:
    """The parser the verify step ships (npu_smi.py), run here on a fixture."""
    return part("npu_smi").chips(text)


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_parser_reads_every_format(fixture):
    chips = parse_locally((FIXTURES / f"{fixture}.txt").read_text())
    count, first, last = EXPECTED[fixture]
    assert (len(chips), chips[0], chips[-1]) == (count, first, last)
    assert len({(c["npu"], c["chip"]) for c in chips}) == count  # process-table rows are not chips


def test_parser_finds_nothing_in_an_error_message():
    assert parse_locally("dcmi module initialize failed. ret is -8005\n") == []


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_verify_over_ssh_reports_a_healthy_node(node, fixture):
    node.preinstall(NEW)
    node.knob("npu-smi-fixture", fixture)
    result = node.run_step(node.spec(npu_count=EXPECTED[fixture][0]), "verify")
    assert result.returncode == 0, result.stderr
    report = step_report(result.stdout)
    assert report["node"] == "fake-npu-01" and report["healthy"] is True and report["rebootRequired"] is False
    assert report["versions"] == {"driver": NEW["driver"], "firmware": NEW["firmware"], "cann": NEW["cann"],
                                  "dockerRuntime": "v" + NEW["dockerRuntime"]}  # as its installer records it
    assert report["chips"] == parse_locally((FIXTURES / f"{fixture}.txt").read_text())


def test_an_unhealthy_chip_fails_verify(node):
    node.preinstall(NEW)
    node.knob("npu-smi-health", "3 Critical")
    result = node.run_step(node.spec(), "verify")
    assert result.returncode != 0
    assert "NPU 3 chip 0 (0000:81:00.0) is Critical, not OK" in result.stderr
    report = step_report(result.stdout)
    assert report["healthy"] is False
    assert [c["health"] for c in report["chips"]] == ["OK"] * 3 + ["Critical"] + ["OK"] * 4


def test_a_missing_chip_fails_verify(node):
    node.preinstall(NEW)
    node.knob("npu-smi-fixture", "310p")
    node.knob("npu-smi-drop", "3")
    result = node.run_step(node.spec(npu_count=4), "verify")
    assert result.returncode != 0
    assert "npu-smi shows 2 chip(s) (NPU/chip: 2/0, 2/1), the node should have 4" in result.stderr
    assert step_report(result.stdout)["healthy"] is False


def test_a_version_other_than_the_wanted_one_fails_verify(node):
    node.preinstall(OLD)
    result = node.run_step(node.spec(NEW), "verify")
    assert result.returncode != 0
    assert f"driver is {OLD['driver']}, the stack wants {NEW['driver']}" in result.stderr
    assert f"kernels is {OLD['cann']}, the stack wants {NEW['cann']}" in result.stderr
    assert step_report(result.stdout)["versions"]["driver"] == OLD["driver"]


def test_a_broken_driver_fails_verify_with_npu_smi_error(node):
    node.preinstall(NEW)
    node.knob("npu-smi-fail", "1")
    result = node.run_step(node.spec(), "verify")
    assert result.returncode != 0
    assert "npu-smi info failed (exit 1): dcmi module initialize failed" in result.stderr
    assert step_report(result.stdout)["chips"] == []


def test_a_driver_file_version_with_an_extra_patch_counts_as_the_wanted_one(node):
    node.preinstall({**NEW, "driver": NEW["driver"].upper() + ".1"})
    result = node.run_step(node.spec(), "verify")
    assert result.returncode == 0, result.stderr
    assert step_report(result.stdout)["versions"]["driver"] == "24.1.RC2.1"


def test_the_report_takes_named_arguments_and_shows_cann_from_the_toolkit(capsys):
    chip = {"npu": 0, "chip": 0, "name": "910B2", "health": "OK", "busId": "0000:C1:00.0"}
    code = part("verify_report").main([
        "--node", "n1", "--expected-chips", "1", "--reboot-pending", "true", "--chips", json.dumps([chip]),
        "--found", "driver=24.1.rc2", "--found", "toolkit=8.0.RC3", "--found", "kernels=8.0.RC3",
        "--problem=-firmware is not installed"])
    out, err = capsys.readouterr()
    assert code == 1 and "[verify] -firmware is not installed" in err.splitlines()
    report = json.loads(out.strip().splitlines()[-1])
    assert report["versions"] == {"driver": "24.1.rc2", "firmware": None, "cann": "8.0.RC3", "dockerRuntime": None}
    assert (report["node"], report["rebootRequired"], report["healthy"]) == ("n1", True, False)
