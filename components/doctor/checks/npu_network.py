"""What hccn_tool says of each NPU the stack gives a network: link up, the address as written, the probe answering."""
from __future__ import annotations

from components.config.hosts import NodeSpec
from components.doctor.findings import ERROR, WARNING, Finding, Kind
from components.doctor.remote import HostReport

NPU_LINK_DOWN = Kind("npu-link-down", ERROR, "an NPU's network link is down: jobs across servers cannot use it")
NPU_ADDRESS_WRONG = Kind("npu-address-wrong", ERROR, "an NPU's device IP is not the one the stack gives it")
NPU_PROBE_FAILS = Kind("npu-probe-fails", WARNING, "an NPU's detection address does not answer")
KINDS = (NPU_LINK_DOWN, NPU_ADDRESS_WRONG, NPU_PROBE_FAILS)


def _after(text: str, label: str) -> str:
    """The value after `LABEL` on its line (`link status: UP`, `ipaddr:1.2.3.4`), or ""."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return line.strip()[len(label):].strip()
    return ""


def check(node: NodeSpec, report: HostReport) -> list[Finding]:
    found = []
    for port in node.npu_network:
        read = {what: report.body(f"hccn:{port.npu}:{what}") for what in ("link", "ip", "net_health")}
        link = _after(read["link"], "link status:")
        if link != "UP":
            found.append(NPU_LINK_DOWN(node.name, f"NPU {port.npu}: link {link or 'not read'} "
                                                  f"({(read['link'].splitlines() or ['no output'])[0]})",
                                       f"check the cable and the switch port of NPU {port.npu}; "
                                       f"`hccn_tool -i {port.npu} -link_stat -g` lists its link changes"))
            continue
        shows = _after(read["ip"], "ipaddr:")
        if shows != port.address:
            found.append(NPU_ADDRESS_WRONG(node.name, f"NPU {port.npu} shows {shows or 'no address'}, the stack "
                                                      f"gives {port.address}", "`pulumi up` writes it again"))
        health = _after(read["net_health"], "net health status:")
        if health != "Success":
            found.append(NPU_PROBE_FAILS(node.name, f"NPU {port.npu}: detection address {port.detect} does not "
                                                    f"answer (net health status: {health or 'not read'})",
                                         f"check that {port.detect} is up and routed from {port.address}"))
    return found
