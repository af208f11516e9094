"""Alerts on what comes before an NPU fails: HBM ECC, its network links, RoCE, HCCS and error codes.

One rule group per concern. Every series read here is written by both catalogued exporter releases
(v6.0.0 and v26.1.0, components/releases/npu-exporter.yaml); line numbers are at those tags of
github.com/Ascend/mind-cluster. v26.1.0 paths below are under component/npu-exporter/collector/ unless
they start with component/; a bare v6.0.0 line is in component/npu-exporter/collector/npu_collector.go; "the
metrics API doc" is v26.1.0 docs/en/scheduling/api/npu_exporter/01_prometheus_metrics_api.md. The label `id`
is the chip's physical id (v26.1.0 metrics/common_utils.go L125-128), the one `hccn_tool -i` takes.
Each family is written only by the chips that have it (HBM: 910 series; network, RoCE: training cards;
HCCS: 910B and 910A3), so a chip without the series has nothing to alert on.
"""
from __future__ import annotations

from typing import Any

# Fixed, not stack settings: each alert fires on a rise the hardware counts as an error, except this one.
SINGLE_BIT_ERRORS_PER_HOUR = 100  # correctable HBM errors in an hour that count as "rising fast"
LINK_UPS_PER_HALF_HOUR = 3  # a link that came up this often in 30 minutes is flapping
ROCE_ERROR_COUNTERS = ("npu_chip_roce_rx_err_pkt_num", "npu_chip_roce_tx_err_pkt_num",
                       "npu_chip_roce_qp_status_err_num", "npu_chip_roce_verification_err_num",
                       "npu_chip_mac_rx_bad_pkt_num", "npu_chip_mac_tx_bad_pkt_num")
HCCS_LINKS = range(8)  # npu_chip_info_hccs_statistic_info_crc_err_cnt_0 .. _7
WHERE = "NPU {{ $labels.id }} on {{ $labels.node }}"
COUNT = '{{ $value | printf "%.0f" }}'


def _any_of(terms: list[str]) -> str:
    return "\n or\n".join(terms)


def roce_errors(selector: str, window: str, above: str = "") -> str:
    """Each RoCE/MAC error counter's rise over `window`, labelled `counter` with its metric name."""
    return _any_of([f'label_replace(increase({name}{{{selector}}}[{window}]){above}, "counter", "{name}", "", "")'
                    for name in ROCE_ERROR_COUNTERS])


def hccs_crc_errors(selector: str, window: str, above: str = "") -> str:
    """Each HCCS link's CRC error rise over `window`, labelled `link`; windows holding a -1 (read failed) left out."""
    terms = []
    for link in HCCS_LINKS:
        name = f"npu_chip_info_hccs_statistic_info_crc_err_cnt_{link}{{{selector}}}"
        terms.append(f'label_replace(\n  increase({name}[{window}]){above}\n'
                     f'  and min_over_time({name}[{window}]) >= 0,\n  "link", "{link}", "", "")')
    return _any_of(terms)


def _alert(name: str, expr: str, severity: str, summary: str, description: str, wait: str | None = None) -> dict:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if wait:
        rule["for"] = wait
    rule.update({"labels": {"severity": severity},
                 "annotations": {"summary": summary, "description": description}})
    return rule


def _hbm_ecc(job: str) -> list[dict]:
    # Meaning (the metrics API doc L694-755): the
    # *_total_* counts are every error "over the lifetime" of the HBM, so a counter: increase(). The others
    # are the DCMI struct's current counts (component/ascend-common/devmanager/dcmi/dcmi_interface_api.h
    # L72-83) and the isolated pages a number of pages: gauges, so delta(), which a reset or a fall never
    # turns into a rise. Written: v26.1.0 metrics/collector_for_hbm.go L37-51, L193-204 (910 series only,
    # L55-61); v6.0.0 L264-277, L1755-1796 (nothing when the ECC read fails, L1912-1916).
    sel = f'job="{job}"'
    return [
        _alert("AscendNpuHbmDoubleBitEccErrors",
               f"increase(npu_chip_info_hbm_ecc_total_double_bit_error_cnt{{{sel}}}[1h]) > 0\n or\n"
               f"delta(npu_chip_info_hbm_ecc_double_bit_error_cnt{{{sel}}}[1h]) > 0",
               "critical", "An Ascend NPU had uncorrectable (double-bit) HBM ECC errors.",
               f"{WHERE} counted {COUNT} double-bit HBM ECC errors in the last hour; data in its memory may "
               "be corrupt. Drain its jobs; on the node, `npu-smi info -i <NPU> -t ecc` for the NPU at bus "
               "{{ $labels.pcie_bus_info }}."),
        _alert("AscendNpuHbmSingleBitEccErrorsRising",
               f"increase(npu_chip_info_hbm_ecc_total_single_bit_error_cnt{{{sel}}}[1h]) > "
               f"{SINGLE_BIT_ERRORS_PER_HOUR}\n or\n"
               f"delta(npu_chip_info_hbm_ecc_single_bit_error_cnt{{{sel}}}[1h]) > {SINGLE_BIT_ERRORS_PER_HOUR}",
               "warning", "An Ascend NPU's correctable HBM ECC errors rise fast.",
               f"{WHERE} corrected {COUNT} single-bit HBM ECC errors in the last hour (more than "
               f"{SINGLE_BIT_ERRORS_PER_HOUR}); its HBM may be wearing out. Watch its isolated pages.", "10m"),
        _alert("AscendNpuHbmPagesIsolated",
               _any_of([f'label_replace(delta(npu_chip_info_hbm_ecc_{kind}_isolated_pages_cnt{{{sel}}}[1h]) > 0, '
                        f'"ecc", "{kind}", "", "")' for kind in ("single_bit", "double_bit")]),
               "warning", "An Ascend NPU isolated more HBM pages.",
               f"{WHERE} isolated {COUNT} more HBM pages for {{{{ $labels.ecc }}}} ECC errors in the last hour."),
    ]


def _network(job: str) -> list[dict]:
    # Written only by training cards (v26.1.0 metrics/collector_for_network.go L81-100, IsTrainingCard, and
    # for roce metrics/collector_for_roce.go L101-111; v6.0.0 L507-510), so inference chips write none.
    # Link status (v26.1.0 collector_for_network.go L169-171, L372-384; common/constants.go L34-45): UP is
    # HealthyCode 1, any other state UnhealthyCode 0; Unknown (hccn_tool failed) is FailedValue, written as
    # -1 (metrics/common_utils.go L88-91; component/ascend-common/devmanager/common/constants.go L171-175),
    # NotReport is UnRetError (MaxUint32, L119-120), never written (common_utils.go L36-42, L59-64). v6.0.0:
    # 1 for UP, 0 otherwise, a failed read -1 and dropped (component/ascend-common/devmanager/hccn/
    # hccn_tool.go L48-49, L354-363; npu_collector.go L1043-1049, L1389-1408). Link-ups: the "link up
    # count" of `hccn_tool -i <id> -link_stat -g` (v26.1.0 component/ascend-common/devmanager/hccn/
    # hccn_tool.go L160-194), a count of events, so increase(); written only when read (collector_for_network.go
    # L166-168; v6.0.0 L1368-1387).
    # RoCE and MAC counters: "Total number of bad packets ..." (the metrics API doc L1081-1250), read
    # from `hccn_tool -i <id> -stat -g` (hccn_tool.go L197-222; collector_for_roce.go L144-152, L242-268;
    # v6.0.0 L1097-1190): counters, so increase().
    sel = f'job="{job}"'
    return [
        _alert("AscendNpuNetworkLinkDown", f"npu_chip_info_link_status{{{sel}}} == 0",
               "critical", "An Ascend NPU's network link is down.",
               f"{WHERE} reports its RoCE link DOWN; it cannot take part in multi-node jobs. Check the cable "
               "and optics, and `hccn_tool -i {{ $labels.id }} -link -g` on the node.", "5m"),
        _alert("AscendNpuNetworkLinkFlapping",
               f"increase(npu_chip_link_up_num{{{sel}}}[30m]) >= {LINK_UPS_PER_HALF_HOUR}",
               "warning", "An Ascend NPU's network link is flapping.",
               f"{WHERE}: its RoCE link came up {COUNT} times in 30 minutes; see its link change records with "
               "`hccn_tool -i {{ $labels.id }} -link_stat -g` on the node."),
        _alert("AscendNpuRoceErrorsRising", roce_errors(sel, "10m", " > 0"),
               "warning", "An Ascend NPU's RoCE error counters keep rising.",
               f"{WHERE}: {{{{ $labels.counter }}}} rose by {COUNT} in 10 minutes, and has kept rising for "
               "15 minutes; see `hccn_tool -i {{ $labels.id }} -stat -g` on the node.", "15m"),
    ]


def _hccs(job: str) -> list[dict]:
    # The chip-to-chip HCCS links of 910B and 910A3 (v26.1.0 metrics/collector_for_hccs.go L42-45, from link
    # 1 or 2 on, L160-170; v6.0.0 L1651-1671). CRC errors per link are a count, written beside the links'
    # message counts (L57-70, L245-249; v6.0.0 L1693-1723), so increase(); a failed read writes -1 for
    # every link (L300-312, with common_utils.go
    # L88-91; v6.0.0 L1673-1691 and component/ascend-common/devmanager/devmanager.go L906-922), which a
    # counter would read as a reset and a rise, so a window holding a -1 is left out.
    return [_alert("AscendNpuHccsCrcErrorsRising", hccs_crc_errors(f'job="{job}"', "10m", " > 0"),
                   "warning", "An Ascend NPU's HCCS link keeps counting CRC errors.",
                   f"{WHERE}: HCCS link {{{{ $labels.link }}}} counted {COUNT} CRC errors in 10 minutes, and "
                   "has kept counting for 15 minutes; on the node, `npu-smi info -t hccs -i <NPU> -c <chip>` for the "
                   "NPU at bus {{ $labels.pcie_bus_info }}.",
                   "15m")]


def _error_codes(job: str) -> list[dict]:
    # An error code is written only while the chip has one: 0 means none and is dropped (v26.1.0
    # component/ascend-common/devmanager/dcmi/dcmi.go L2044-2049; v6.0.0 L1463-1468), each code goes to
    # its own series, the first to npu_chip_info_error_code, up to _9 (v26.1.0 metrics/collector_for_npu.go
    # L98-101, L311-318; v6.0.0 L1576-1595). The metrics API doc (v26.1.0 L183-189): "When there is no
    # error code ... this field will not be reported".
    return [_alert("AscendNpuErrorCode", f'npu_chip_info_error_code{{job="{job}"}} > 0',
                   "warning", "An Ascend NPU reports an error code.",
                   f"{WHERE} reports error code {COUNT} (decimal; its first current code); read it with "
                   "`npu-smi info -i <NPU> -c <chip> -t health` on the node, for the NPU at bus "
                   "{{ $labels.pcie_bus_info }}.", "5m")]


def prefailure_rule_groups(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The rule groups watching for what precedes a chip failure, one per concern."""
    job = values["monitoring"]["jobName"]
    return [{"name": "ascend-npu-hbm-ecc", "rules": _hbm_ecc(job)},
            {"name": "ascend-npu-network", "rules": _network(job)},
            {"name": "ascend-npu-hccs", "rules": _hccs(job)},
            {"name": "ascend-npu-error-codes", "rules": _error_codes(job)}]
