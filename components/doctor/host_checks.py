"""What the probe read on a node, checked against the stack: NPUs, versions, the engine's runtime, devices, socket."""
from __future__ import annotations

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.doctor.checks import devices, engine, npu_network, npus, reach, versions
from components.doctor.findings import Finding
from components.doctor.remote import HostReport

HANDLER = engine.HANDLER
chips = npus.chips
installed = versions.installed


def host_findings(spec: StackSpec, node: NodeSpec, report: HostReport, ready: bool) -> list[Finding]:
    """Every host finding of NODE; a node that could not be checked is one finding, `node-unreachable`."""
    if report.error:
        return [reach.node_unreachable(node.name, report.error)]
    seen = npus.chips(report)
    return (npus.check(node, report, seen) + versions.check(node, report, ready)
            + engine.check(spec, node, report) + devices.check(node, report, seen) + npu_network.check(node, report))
