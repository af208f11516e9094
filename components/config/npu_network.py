"""The NPUs' own network (RoCE): each chip's device IP, netmask, gateway and detection address, and their checks."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Optional, Union

from pydantic import Field, field_validator

from components.config.base import SpecModel
from components.config.problems import Problem
from components.config.redact import preview

# Only training cards have NPU network ports: the exporter collects network metrics for them alone
# (mind-cluster v26.1.0 component/npu-exporter/collector/metrics/collector_for_network.go L82-99).
NETWORKED_CHIPS = ("910", "910B", "910C")  # 910C: one address per chip (hccn_tool -i takes a device id)


def ipv4(value: str) -> str:
    """An IPv4 address in dotted form (hccn_tool takes no other)."""
    try:
        return str(ipaddress.IPv4Address(str(value).strip()))
    except ValueError:
        raise ValueError(f"{preview(str(value))} is not an IPv4 address; write for example '192.168.100.11'") from None


def netmask(value: str) -> str:
    """A dotted netmask whose bits are contiguous (255.255.255.0)."""
    text = ipv4(value)
    try:
        ipaddress.IPv4Network(f"0.0.0.0/{text}")
    except ValueError:
        raise ValueError(f"{text} is not a netmask (its bits are not contiguous); write for example "
                         "'255.255.255.0'") from None
    return text


def one_or_per_npu(value: Union[str, list[str], None]) -> Union[str, list[str], None]:
    if value is None or isinstance(value, str):
        return ipv4(value) if value is not None else None
    return [ipv4(item) for item in value]


class NetworkDefaults(SpecModel):
    """The parts of an NPU network a pool's nodes share."""

    netmask: Optional[str] = Field(None, description="Netmask of every NPU's address, e.g. `255.255.255.0`.")
    gateway: Optional[Union[str, list[str]]] = Field(
        None, description="Gateway: one address for every NPU, or a list with one per NPU id.")
    detect_address: Optional[Union[str, list[str]]] = Field(
        None, description="Address each NPU probes to check its link (`hccn_tool -netdetect`): one, or one per "
                          "NPU id.")

    _mask = field_validator("netmask")(classmethod(lambda cls, v: netmask(v) if v is not None else None))
    _one = field_validator("gateway", "detect_address")(classmethod(lambda cls, v: one_or_per_npu(v)))


class NodeNetwork(NetworkDefaults):
    """A node's NPU network: one address per NPU, in NPU id order, and what its pool does not give."""

    addresses: list[str] = Field(description="Each NPU's device IP, by NPU id (0, 1, ...).")

    _addresses = field_validator("addresses")(classmethod(lambda cls, v: [ipv4(item) for item in v]))


@dataclass(frozen=True)
class NpuPort:
    """One NPU's settings, as the host step writes them with hccn_tool."""

    npu: int
    address: str
    netmask: str
    gateway: str
    detect: str

    def entry(self) -> str:
        return f"{self.npu},{self.address},{self.netmask},{self.gateway},{self.detect}"


def entries(ports: tuple[NpuPort, ...]) -> str:
    """The ports as the host step and the doctor's probe take them: `NPU,ADDRESS,NETMASK,GATEWAY,DETECT ...`."""
    return " ".join(port.entry() for port in ports)


def _pick(value: Union[str, list[str], None], npu: int) -> Optional[str]:
    if isinstance(value, list):
        return value[npu] if npu < len(value) else None
    return value


def resolve(node: Any, pool: Any, index: int, npu_count: Optional[int], chip: Optional[str]
            ) -> tuple[tuple[NpuPort, ...], list[Problem]]:
    """The node's ports with its pool's defaults, or the problems that stop them (named by field)."""
    net: Optional[NodeNetwork] = node.npu_network
    if net is None:
        return (), []
    field = f"nodes[{index}].npuNetwork"
    if chip is not None and chip not in NETWORKED_CHIPS:
        return (), [Problem(field, f"set on a {chip} node: only training chips ({', '.join(NETWORKED_CHIPS)}) have "
                                   "NPU network ports; remove npuNetwork from this node")]
    shared: Optional[NetworkDefaults] = getattr(pool, "npu_network", None) if pool is not None else None
    values = {name: getattr(net, name) or (getattr(shared, name) if shared else None)
              for name in ("netmask", "gateway", "detect_address")}
    problems = [Problem(f"{field}.{alias}", "not set on the node nor on its pool; write " + what)
                for name, alias, what in (("netmask", "netmask", "for example 255.255.255.0"),
                                          ("gateway", "gateway", "the NPU network's gateway"),
                                          ("detect_address", "detectAddress", "an address each NPU can reach"))
                if values[name] is None]
    if npu_count is not None and len(net.addresses) != npu_count:
        problems.append(Problem(f"{field}.addresses", f"{len(net.addresses)} addresses for {npu_count} NPUs; write "
                                                      "one per NPU, in NPU id order (0, 1, ...)"))
    for name, alias in (("gateway", "gateway"), ("detect_address", "detectAddress")):
        given = values[name]
        if isinstance(given, list) and len(given) != len(net.addresses):
            problems.append(Problem(f"{field}.{alias}", f"{len(given)} addresses for "
                                                        f"{len(net.addresses)} NPUs; write one, or one per NPU"))
    mask, gateway, detect = values["netmask"], values["gateway"], values["detect_address"]
    if problems or mask is None or gateway is None or detect is None:
        return (), problems
    ports = tuple(NpuPort(i, address, mask, _pick(gateway, i) or "", _pick(detect, i) or "")
                  for i, address in enumerate(net.addresses))
    return ports, _subnets(ports, field)


def _subnets(ports: tuple[NpuPort, ...], field: str) -> list[Problem]:
    """Each NPU's gateway is in its own subnet, and no address is its own gateway or probe."""
    problems = []
    for port in ports:
        subnet = ipaddress.IPv4Network(f"{port.address}/{port.netmask}", strict=False)
        if ipaddress.IPv4Address(port.gateway) not in subnet:
            problems.append(Problem(f"{field}.addresses[{port.npu}]", f"{port.address} is not in the subnet of its "
                                                                      f"gateway {port.gateway} ({subnet}); fix the "
                                                                      "address, the netmask or the gateway"))
        elif port.address in (port.gateway, port.detect):
            problems.append(Problem(f"{field}.addresses[{port.npu}]", f"{port.address} is also NPU {port.npu}'s "
                                                                      "gateway or detection address; give it an "
                                                                      "address of its own"))
    return problems


def check_unique(nodes: list[tuple[int, tuple[NpuPort, ...]]]) -> list[Problem]:
    """No device IP twice across the cluster."""
    seen: dict[str, str] = {}
    problems = []
    for index, ports in nodes:
        for port in ports:
            field = f"nodes[{index}].npuNetwork.addresses[{port.npu}]"
            if port.address in seen:
                problems.append(Problem(field, f"{port.address} is also {seen[port.address]}; each NPU needs an "
                                               "address of its own across the cluster"))
            seen.setdefault(port.address, field)
    return problems
