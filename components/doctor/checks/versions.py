"""The installed versions as the verify step reads them (lib.sh, run by the probe on the host) against the stack."""
from __future__ import annotations

from components.config.hosts import NodeSpec
from components.doctor.findings import ERROR, Finding, Kind
from components.doctor.remote import HostReport

HOST_VERSIONS = Kind("host-versions", ERROR, "a driver, firmware, CANN or runtime version is not the stack's")
KINDS = (HOST_VERSIONS,)
READY_NOTE = "; yet it is labelled ascend-npu.io/ready=true, so NPU work lands on it"


def record(report: HostReport, kind: str) -> dict[str, str]:
    """The probe's `version KIND` section: found, wanted, and `matches` (yes or no, lib.sh `shows`)."""
    fields = dict(line.partition("=")[::2] for line in report.body(f"version:{kind}").splitlines() if "=" in line)
    return {"found": fields.get("found", ""), "wanted": fields.get("wanted", ""),
            "matches": report.header(f"version:{kind}")}


def installed(report: HostReport) -> dict[str, str]:
    """Each kind's installed version, as verify reads it."""
    return {name.partition(":")[2]: record(report, name.partition(":")[2])["found"]
            for name in report.sections if name.startswith("version:")}


def check(node: NodeSpec, report: HostReport, ready: bool) -> list[Finding]:
    problems = []
    for name in report.sections:
        if name.startswith("version:"):
            kind = name.partition(":")[2]
            seen = record(report, kind)
            if seen["matches"] != "yes":
                problems.append(f"{kind} is {seen['found'] or 'not installed'}, the stack wants {seen['wanted']}")
    if not problems:
        return []
    return [HOST_VERSIONS(node.name, "; ".join(problems) + (READY_NOTE if ready else ""),
                          "`pulumi up` installs the stack's versions (the node is drained first); if the node was "
                          "changed on purpose, pin those versions in the stack instead")]
