"""The alerts on what comes before a chip fails fire, and stay quiet, on input series shaped as the exporter writes.

Chips that write no such series (inference cards have no network, RoCE or HCCS series; 310P no HBM ECC
series) write only their health here. Each mutation below makes a rule less careful; promtool then fails on
these same cases, so the quiet cases have teeth.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
import yaml

from components.cluster.monitoring.alerts import rules_file
from components.cluster.monitoring.prefailure_alerts import ROCE_ERROR_COUNTERS, prefailure_rule_groups

from .promtool_rules import JOB, alert, cases_missing, chip, needs_promtool, run_rule_tests, series

pytestmark = needs_promtool


BUS_ID = "0000:C1:00.0"


def npu(npu_id: str, node: str = "train-01") -> str:
    return f'{JOB},node="{node}",id="{npu_id}",pcie_bus_info="{BUS_ID}"'


def on(npu_id: str, severity: str, **extra: str) -> dict[str, str]:
    return chip("train-01", npu_id, severity, pcie_bus_info=BUS_ID, **extra)


def notes(summary: str, description: str) -> dict[str, str]:
    return {"summary": summary, "description": description}


INFERENCE = series("npu_chip_info_health_status", npu("0", "infer-01"), "1x120")
ECC = "npu_chip_info_hbm_ecc_"
BUS = f"on the node, `npu-smi info -i <NPU> -t ecc` for the NPU at bus {BUS_ID}."
DOUBLE = ("An Ascend NPU had uncorrectable (double-bit) HBM ECC errors.",
          "HBM ECC errors in the last hour; data in its memory may be corrupt. Drain its jobs; " + BUS)
HCCS = [f"npu_chip_info_hccs_statistic_info_crc_err_cnt_{link}" for link in range(1, 8)]
FAILING_READS = " ".join(["5", "5", "-1"] * 40)

TESTS = [
    {"interval": "1m", "input_series": [  # 0: the lifetime total rises; 1: flat; 2: only the current count
        series(f"{ECC}total_double_bit_error_cnt", npu("0"), "0x30 1x90"),
        series(f"{ECC}double_bit_error_cnt", npu("0"), "0x30 1x90"),
        series(f"{ECC}total_double_bit_error_cnt", npu("1"), "3x120"),
        series(f"{ECC}double_bit_error_cnt", npu("1"), "3x120"),
        series(f"{ECC}total_double_bit_error_cnt", npu("2"), "0x120"),
        series(f"{ECC}double_bit_error_cnt", npu("2"), "0x30 2x90"),
        series(f"{ECC}total_double_bit_error_cnt", npu("3"), "4x120"),  # 3: the current count falls
        series(f"{ECC}double_bit_error_cnt", npu("3"), "3x30 1x90"), INFERENCE],
     "alert_rule_test": [
         alert("20m", "AscendNpuHbmDoubleBitEccErrors"),
         alert("40m", "AscendNpuHbmDoubleBitEccErrors", *[
             (on(n, "critical"), notes(DOUBLE[0], f"NPU {n} on train-01 counted {k} double-bit "
                                                                 + DOUBLE[1])) for n, k in (("0", 1), ("2", 2))]),
         alert("100m", "AscendNpuHbmDoubleBitEccErrors")]},
    {"interval": "1m", "input_series": [  # 300 corrected errors an hour; 60 an hour; none
        series(f"{ECC}total_single_bit_error_cnt", npu("0"), "0+5x120"),
        series(f"{ECC}total_single_bit_error_cnt", npu("1"), "0+1x120"),
        series(f"{ECC}single_bit_error_cnt", npu("1"), "0+1x120"),
        series(f"{ECC}total_single_bit_error_cnt", npu("2"), "7x120"), INFERENCE],
     "alert_rule_test": [
         alert("25m", "AscendNpuHbmSingleBitEccErrorsRising"),
         alert("70m", "AscendNpuHbmSingleBitEccErrorsRising", (on("0", "warning"), notes(
             "An Ascend NPU's correctable HBM ECC errors rise fast.",
             "NPU 0 on train-01 corrected 300 single-bit HBM ECC errors in the last hour (more than 100); its "
             "HBM may be wearing out. Watch its isolated pages.")))]},
    {"interval": "1m", "input_series": [  # 0: two more pages; 1: flat; 2: fewer pages
        series(f"{ECC}single_bit_isolated_pages_cnt", npu("0"), "0x30 2x90"),
        series(f"{ECC}double_bit_isolated_pages_cnt", npu("0"), "0x120"),
        series(f"{ECC}single_bit_isolated_pages_cnt", npu("1"), "5x120"),
        series(f"{ECC}double_bit_isolated_pages_cnt", npu("1"), "5x120"),
        series(f"{ECC}single_bit_isolated_pages_cnt", npu("2"), "4x30 1x90"), INFERENCE],
     "alert_rule_test": [
         alert("20m", "AscendNpuHbmPagesIsolated"),
         alert("40m", "AscendNpuHbmPagesIsolated", (on("0", "warning", ecc="single_bit"), notes(
             "An Ascend NPU isolated more HBM pages.",
             "NPU 0 on train-01 isolated 2 more HBM pages for single_bit ECC errors in the last hour."))),
         alert("110m", "AscendNpuHbmPagesIsolated")]},
    {"interval": "1m", "input_series": [  # 0 goes down; 1 up; 2 unknown (-1); 3 down for 3 minutes only
        series("npu_chip_info_link_status", npu("0"), "1x10 0x30"),
        series("npu_chip_info_link_status", npu("1"), "1x40"),
        series("npu_chip_info_link_status", npu("2"), "-1x40"),
        series("npu_chip_info_link_status", npu("3"), "1x10 0x2 1x28"), INFERENCE],
     "alert_rule_test": [
         alert("8m", "AscendNpuNetworkLinkDown"),
         alert("20m", "AscendNpuNetworkLinkDown", (on("0", "critical"), notes(
             "An Ascend NPU's network link is down.",
             "NPU 0 on train-01 reports its RoCE link DOWN; it cannot take part in multi-node jobs. Check the "
             "cable and optics, and `hccn_tool -i 0 -link -g` on the node.")))]},
    {"interval": "1m", "input_series": [  # 0 comes up 3 times; 1 never; 2 once; 3 counter reset, then once
        series("npu_chip_link_up_num", npu("0"), "1x10 2 3 4x30"),
        series("npu_chip_link_up_num", npu("1"), "2x40"),
        series("npu_chip_link_up_num", npu("2"), "5x10 6x30"),
        series("npu_chip_link_up_num", npu("3"), "40x10 0 1x30"), INFERENCE],
     "alert_rule_test": [
         alert("5m", "AscendNpuNetworkLinkFlapping"),
         alert("20m", "AscendNpuNetworkLinkFlapping", (on("0", "warning"), notes(
             "An Ascend NPU's network link is flapping.",
             "NPU 0 on train-01: its RoCE link came up 3 times in 30 minutes; see its link change records with "
             "`hccn_tool -i 0 -link_stat -g` on the node."))),
         alert("50m", "AscendNpuNetworkLinkFlapping")]},
    {"interval": "1m", "input_series": [  # from 21m, 0: rx errors keep rising, 2: QP status errors; 1: one burst
        *[series(name, npu(n), "0x60") for name in ROCE_ERROR_COUNTERS for n in "012"
          if (name, n) not in {("npu_chip_roce_rx_err_pkt_num", "0"), ("npu_chip_mac_rx_bad_pkt_num", "1"),
                               ("npu_chip_roce_qp_status_err_num", "2")}],
        series("npu_chip_roce_rx_err_pkt_num", npu("0"), "0x20 0+2x40"),
        series("npu_chip_mac_rx_bad_pkt_num", npu("1"), "0x5 50x55"),
        series("npu_chip_roce_qp_status_err_num", npu("2"), "0x20 0+1x40"), INFERENCE],
     "alert_rule_test": [
         alert("14m", "AscendNpuRoceErrorsRising"),  # the burst has counted for 9 of the 15 minutes
         alert("30m", "AscendNpuRoceErrorsRising"),
         alert("45m", "AscendNpuRoceErrorsRising", *[
             (on(n, "warning", counter=name), notes(
                 "An Ascend NPU's RoCE error counters keep rising.",
                 f"NPU {n} on train-01: {name} rose by {k} in 10 minutes, and has kept rising for 15 minutes; "
                 f"see `hccn_tool -i {n} -stat -g` on the node."))
             for n, name, k in (("0", "npu_chip_roce_rx_err_pkt_num", 20),
                                ("2", "npu_chip_roce_qp_status_err_num", 10))])]},
    {"interval": "1m", "input_series": [  # 0: link 1 keeps counting; 1: reads fail now and then; 2: flat;
        *[series(name, npu(n), "0x60") for name in HCCS[1:] for n in "0123"],  # 3: a failed read, then flat
        series(HCCS[0], npu("0"), "0+3x60"), series(HCCS[0], npu("1"), FAILING_READS),
        series(HCCS[0], npu("2"), "0x60"), series(HCCS[0], npu("3"), "-1x10 7x50"), INFERENCE],
     "alert_rule_test": [
         alert("10m", "AscendNpuHccsCrcErrorsRising"),
         alert("30m", "AscendNpuHccsCrcErrorsRising", (on("0", "warning", link="1"), notes(
             "An Ascend NPU's HCCS link keeps counting CRC errors.",
             "NPU 0 on train-01: HCCS link 1 counted 30 CRC errors in 10 minutes, and has kept counting for 15 "
             f"minutes; on the node, `npu-smi info -t hccs -i <NPU> -c <chip>` for the NPU at bus {BUS_ID}.")))]},
    {"interval": "1m", "input_series": [  # 0x81078603 on NPU 0 from the start; NPU 1 has none
        series("npu_chip_info_error_code", npu("0"), "2164753923x20"),
        series("npu_chip_info_health_status", npu("1"), "1x20"), INFERENCE],
     "alert_rule_test": [
         alert("3m", "AscendNpuErrorCode"),
         alert("10m", "AscendNpuErrorCode", (on("0", "warning"), notes(
             "An Ascend NPU reports an error code.",
             "NPU 0 on train-01 reports error code 2164753923 (decimal; its first current code); read it with "
             f"`npu-smi info -i <NPU> -c <chip> -t health` on the node, for the NPU at bus {BUS_ID}.")))]},
]


@pytest.fixture
def prod(values) -> dict[str, Any]:
    return values["prod"]


def test_prefailure_alerts_fire_and_stay_quiet(prod, tmp_path):
    result = run_rule_tests(rules_file(prod), TESTS, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_prefailure_alert_is_tested_firing_and_quiet(prod):
    assert cases_missing(prefailure_rule_groups(prod), TESTS) == []


def _replace(old: str, new: str) -> Callable[[dict], None]:
    def mutate(rule: dict) -> None:
        assert old in rule["expr"]
        rule["expr"] = rule["expr"].replace(old, new)
    return mutate


def _unguarded(rule: dict) -> None:
    rule["expr"] = "\n or\n".join(f'label_replace(increase({name}{{{JOB}}}[10m]) > 0, "link", "{link}", "", "")'
                                  for link, name in enumerate(HCCS, start=1))


MUTATIONS: dict[str, tuple[str, Callable[[dict], None]]] = {
    "link down on any value but up, -1 too": ("AscendNpuNetworkLinkDown", _replace("== 0", "!= 1")),
    "a single bounce is flapping": ("AscendNpuNetworkLinkFlapping", _replace(">= 3", ">= 1")),
    "current double-bit count read as a counter": ("AscendNpuHbmDoubleBitEccErrors", _replace("delta(", "increase(")),
    "isolated pages read as a counter": ("AscendNpuHbmPagesIsolated", _replace("delta(", "increase(")),
    "one RoCE burst is enough": ("AscendNpuRoceErrorsRising", lambda rule: rule.update({"for": "5m"})),
    "HCCS windows with a failed read kept": ("AscendNpuHccsCrcErrorsRising", _unguarded),
    "an error code alerts at once": ("AscendNpuErrorCode", lambda rule: rule.pop("for")),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_a_less_careful_rule_fails_the_cases(prod, tmp_path, name):
    alert_name, mutate = MUTATIONS[name]
    groups = copy.deepcopy(prefailure_rule_groups(prod))
    rule = next(r for g in groups for r in g["rules"] if r["alert"] == alert_name)
    mutate(rule)
    result = run_rule_tests(yaml.safe_dump({"groups": groups}, sort_keys=False), TESTS, tmp_path)
    assert result.returncode != 0, f"{name}: promtool still passes"
    assert alert_name in result.stdout + result.stderr
