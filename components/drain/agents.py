"""The node's own NPU agents off it while its driver or firmware is replaced, and back once it verified.

MindCluster's installation guide (v26.1.0, docs/zh/scheduling/05_developer_guide/00_installation_deployment/
00_manual_installation/03_npu_exporter.md L24 and 04_ascend_device_plugin.md L22): both agents call the driver
periodically; to upgrade it, first stop the workloads, then the NPU Exporter and Ascend Device Plugin. The driver's
installer refuses to upgrade or uninstall while a process holds the NPU's device nodes (github.com/hicann/driver
ef377e9, scripts/package/custom/driver/common/scripts/driver_install.sh L416-422, exit 1).

The agents' DaemonSets select `ascend-npu.io/ready=true` (components/cluster/common/node_labels.py): taking that
label off makes their controller remove the agents' Pods from the node, and no other DaemonSet is touched. The
annotation says the drain took it, so the step after the host steps, and only it, puts it back.
"""
from __future__ import annotations

from typing import Callable

from components.drain.evict import DrainFailed
from components.drain.node_state import node_path
from components.drain.pods import name_of, on_node
from components.kubeapi.client import Api

READY = "ascend-npu.io/ready"
# Its own field manager, which the label step's release recognises (components/labels/contract.py DRAIN_MANAGER).
MANAGER = "ascend-npu-drain"
TAKEN = "ascend-npu.io/npu-agents-off-for"
PART_OF = "app.kubernetes.io/part-of=ascend-npu"
# The stack's Pods that open the NPU device nodes on every node: the device plugin and the exporter.
COMPONENTS = ("device-plugin", "exporter")
POLL = 1.0


def managed(node: str) -> str:
    """The Node's path, its patches under the drain's own field manager."""
    return f"{node_path(node)}?fieldManager={MANAGER}"


def agents(api: Api, node: str) -> list[str]:
    """The stack's NPU agents still on the node, terminating ones included (they hold the devices until gone)."""
    return sorted(name_of(p) for p in on_node(api, node, PART_OF)
                  if ((p.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component") in COMPONENTS)


def hdk_of(reason: str) -> str:
    """The driver and firmware part of a drain reason (`driver X, firmware Y`), what the agents must leave for."""
    return ", ".join(part for part in reason.split(", ") if part.startswith(("driver ", "firmware ")))


def hdk_moves(before: str | None, reason: str) -> bool:
    """Whether the host step replaces the driver or firmware (a node whose reason was never recorded: yes)."""
    return before is None or hdk_of(before) != hdk_of(reason)


def take_off(api: Api, node: dict, reason: str, deadline: float, tell: Callable[[str], None],
             clock: Callable[[], float], sleep: Callable[[float], None]) -> list[str]:
    """Take the ready label off (once, remembering it) and wait, up to DEADLINE, until no agent is on the node."""
    name = node["metadata"]["name"]
    meta = node.get("metadata") or {}
    if (meta.get("labels") or {}).get(READY) == "true" and TAKEN not in (meta.get("annotations") or {}):
        api.merge_patch(managed(name), {"metadata": {"labels": {READY: None}, "annotations": {TAKEN: reason}}})
        tell(f"NPU agents off for {hdk_of(reason)}: {READY} taken off until the node verifies")
    present = agents(api, name)
    gone = list(present)
    while present:
        if clock() >= deadline:
            raise DrainFailed(f"the NPU agents were still on the node: {', '.join(present)}; the driver installer "
                              "refuses while they hold the NPU devices. Their DaemonSet controller removes them once "
                              f"{READY} is off: see `kubectl -n <namespace> get pods -o wide` for why it did not")
        sleep(POLL)
        present = agents(api, name)
    for pod in gone:
        tell(f"NPU agent gone: {pod}")
    return gone


def bring_back(api: Api, node: dict, tell: Callable[[str], None]) -> bool:
    """Put the ready label back where the drain took it; whether it did."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    if TAKEN not in annotations:
        return False
    api.merge_patch(managed(node["metadata"]["name"]), {"metadata": {"labels": {READY: "true"},
                                                                     "annotations": {TAKEN: None}}})
    tell(f"NPU agents back: {READY}=true (they left for {annotations[TAKEN]})")
    return True


def forget(api: Api, node: dict) -> None:
    """A leaving node: the drain's mark gone with the others (the stack takes its labels itself)."""
    if TAKEN in ((node.get("metadata") or {}).get("annotations") or {}):
        api.merge_patch(node_path(node["metadata"]["name"]), {"metadata": {"annotations": {TAKEN: None}}})
