"""What `npu-smi info` shows on the host: it runs, every chip is OK, as many as the stack's npuCount."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Optional

from components.config.hosts import NodeSpec
from components.doctor.findings import ERROR, Finding, Kind
from components.doctor.remote import HostReport

NPU_SMI_FAILS = Kind("npu-smi-fails", ERROR, "npu-smi info fails on the host: the driver is not working")
CHIP_UNHEALTHY = Kind("chip-unhealthy", ERROR, "a chip's health is not OK: the device plugin withholds it")
CHIP_COUNT = Kind("chip-count", ERROR, "npu-smi shows another number of chips than the stack's npuCount")
KINDS = (NPU_SMI_FAILS, CHIP_UNHEALTHY, CHIP_COUNT)

# The parser the verify step ships to the host (components/host/scripts/npu_smi.py), loaded as the file it is.
_SPEC = importlib.util.spec_from_file_location(
    "doctor_npu_smi", Path(__file__).parents[2] / "host" / "scripts" / "npu_smi.py")
assert _SPEC is not None and _SPEC.loader is not None, "components/host/scripts/npu_smi.py is part of the project"
npu_smi = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(npu_smi)


def chips(report: HostReport) -> Optional[list[dict]]:
    """The chips `npu-smi info` listed, or None when it failed."""
    return npu_smi.chips(report.body("npu-smi")) if report.header("npu-smi") == "0" else None


def check(node: NodeSpec, report: HostReport, seen: Optional[list[dict]]) -> list[Finding]:
    if seen is None:
        first = (report.body("npu-smi").splitlines() or ["no output"])[0]
        return [NPU_SMI_FAILS(node.name, f"npu-smi info fails (exit {report.header('npu-smi')}): {first}",
                              "the driver is not loaded or is broken: `pulumi up` reinstalls it; reboot if its "
                              "installer asked for one; see /var/log/ascend-npu/driver.log")]
    found = [CHIP_UNHEALTHY(node.name, f"NPU {c['npu']} chip {c['chip']} ({c['busId']}) is {c['health']}",
                            f"`npu-smi info -t health -i {c['npu']}` for its alarm, then the hardware runbook")
             for c in seen if c["health"] != "OK"]
    if len(seen) != node.npu_count:
        found.append(CHIP_COUNT(node.name, f"npu-smi shows {len(seen)} chip(s), the stack says npuCount "
                                f"{node.npu_count}", "check `lspci | grep -i huawei` and the card seating, or "
                                "correct npuCount"))
    return found
