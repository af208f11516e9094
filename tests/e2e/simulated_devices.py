"""Simulated: the kubelet's device manager. A node advertises its NPUs once the device plugin runs on it.

On a real node the Ascend device plugin registers with the kubelet, which then reports
`huawei.com/Ascend910: <count>` (or the 310/310P name) in the node's capacity and allocatable. kwok runs
no device plugin, so this thread does the kubelet's part: while a Running device plugin pod is on a
node, the node's status carries the chip's resource with the stack's `npuCount`; without one, zero.
"""
from __future__ import annotations

import threading
from typing import Callable

from components.cluster.common.node_labels import RESOURCE_NAMES
from engine.kube import ApiError, Kube

PLUGIN_LABEL = "app.kubernetes.io/component=device-plugin"


class DeviceAdvertiser(threading.Thread):
    """Keeps each stack node's NPU resource in line with its device plugin pod, every `interval` seconds."""

    def __init__(self, kube: Kube, nodes: Callable[[], list[dict]], namespace: str, interval: float = 1.0):
        super().__init__(name="simulated-device-manager", daemon=True)
        self.kube, self.nodes, self.namespace, self.interval = kube, nodes, namespace, interval
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                self.sync()
            except (ApiError, OSError):
                continue

    def sync(self) -> None:
        pods = self.kube.items(f"/api/v1/namespaces/{self.namespace}/pods?labelSelector={PLUGIN_LABEL}")
        running = {p["spec"].get("nodeName") for p in pods if p.get("status", {}).get("phase") == "Running"}
        for node in self.nodes():
            resource = RESOURCE_NAMES[str(node["chip"])]
            count = str(node.get("npuCount", 8)) if node["name"] in running else "0"
            current = self.kube.find(f"/api/v1/nodes/{node['name']}")
            if current is None or current["status"].get("allocatable", {}).get(resource) == count:
                continue
            status = {"capacity": {resource: count}, "allocatable": {resource: count}}
            self.kube.request("PATCH", f"/api/v1/nodes/{node['name']}/status", {"status": status},
                              content_type="application/merge-patch+json")
