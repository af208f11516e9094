"""Simulated: the kubelet's device manager. A node advertises its NPUs once the device plugin runs on it.

On a real node the Ascend device plugin listens on /var/lib/kubelet/device-plugins/<Ascend910|Ascend310P>.sock
(MindCluster component/ascend-device-plugin/pkg/server/server.go, v6.0.0 and v26.1.0) and registers with the
kubelet, which then reports `huawei.com/Ascend910: <count>` (or the 310/310P name) in the node's capacity and
allocatable. kwok runs no device plugin, so this thread does both parts: while a Running device plugin pod is on
a node, that socket exists in the node's sandbox and the node's status carries the chip's resource with the
stack's `npuCount`; without one (or for a node in `failing`, a plugin that finds no device), neither.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Optional

import yaml

from components.cluster.common.node_labels import RESOURCE_NAMES
from components.kubeapi.client import Api, ApiError
from testkit.fakenode.sandbox import unix_socket

PLUGIN_LABEL = "app.kubernetes.io/component=device-plugin"


class Ticker(threading.Thread):
    """A simulated node part that brings the sandboxes in line with the API server every `interval` seconds."""

    # What one tick may meet and the next one retries: the API server restarting, a sandbox file in use.
    PASSING: tuple[type[BaseException], ...] = (ApiError, OSError)

    def __init__(self, name: str, interval: float):
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                self.sync()
            except self.PASSING:
                continue

    def sync(self) -> None:
        raise NotImplementedError


class DeviceAdvertiser(Ticker):
    """Keeps each stack node's NPU resource in line with its device plugin pod, every `interval` seconds."""

    def __init__(self, kube: Api, nodes: Callable[[], list[dict]], namespace: str, interval: float = 1.0,
                 roots: Optional[dict[str, Path]] = None):
        super().__init__("simulated-device-manager", interval)
        self.kube, self.nodes, self.namespace = kube, nodes, namespace
        self.roots = roots or {}
        self.failing: set[str] = set()  # nodes whose plugin runs but registers no device

    def sync(self) -> None:
        pods = self.kube.items(f"/api/v1/namespaces/{self.namespace}/pods?labelSelector={PLUGIN_LABEL}")
        running = {p["spec"].get("nodeName") for p in pods if p.get("status", {}).get("phase") == "Running"}
        # One list of the nodes, not one read of each: a fleet of a thousand is read in a few pages.
        registered = {n["metadata"]["name"]: n for n in self.kube.items("/api/v1/nodes")}
        for node in self.nodes():
            resource = RESOURCE_NAMES[str(node["chip"])]
            serving = node["name"] in running and node["name"] not in self.failing
            self.socket(node["name"], resource, serving)
            count = str(node.get("npuCount", 8)) if serving else "0"
            current = registered.get(node["name"])
            if current is None or current["status"].get("allocatable", {}).get(resource) == count:
                continue
            status = {"capacity": {resource: count}, "allocatable": {resource: count}}
            self.kube.request("PATCH", f"/api/v1/nodes/{node['name']}/status", {"status": status},
                              content_type="application/merge-patch+json")

    def socket(self, name: str, resource: str, present: bool) -> None:
        """The plugin's socket in the node's sandbox (a real unix socket file), there while it serves."""
        root = self.roots.get(name)
        if root is None:
            return
        path = root / "var/lib/kubelet/device-plugins" / f"{resource.split('/')[1]}.sock"
        if present and not path.exists():
            unix_socket(path)
        elif not present and path.exists():
            path.unlink()


class DeviceHolders(Ticker):
    """Simulated: the processes that hold a node's NPU device nodes, as its kubelet runs them. Every Pod on the node
    that requests an NPU, and every NPU agent of the stack (the device plugin and exporter open the driver's devices:
    MindCluster v26.1.0 03_npu_exporter.md L24, 04_ascend_device_plugin.md L22), holds them from the moment it is
    bound until its object is gone (a kubelet removes it only after its containers stopped). Written, one Pod a
    line, to the sandbox's `fake/npu-holders`, which the fake driver installer reads (testkit/fakenode/installer.py).
    """

    # Besides: the stack file read while the run writes it (ROOTS reads it).
    PASSING = (ApiError, OSError, ValueError, yaml.YAMLError)

    def __init__(self, kube: Api, roots: Callable[[], dict[str, Path]], namespace: str, interval: float = 0.2):
        super().__init__("simulated-device-holders", interval)
        self.kube, self.roots, self.namespace = kube, roots, namespace
        self._written: dict[str, str] = {}

    def sync(self) -> None:
        roots = self.roots()
        held: dict[str, list[str]] = {name: [] for name in roots}
        for pod in self.kube.items("/api/v1/pods"):
            node = pod["spec"].get("nodeName")
            if node in held and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed") and holds(pod):
                held[node].append(f"{pod['metadata']['namespace']}/{pod['metadata']['name']}")
        for node, pods in held.items():
            text = "".join(f"{name}\n" for name in sorted(pods))
            if self._written.get(str(roots[node])) != text:
                path = roots[node] / "fake/npu-holders"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                self._written[str(roots[node])] = text


def holds(pod: dict) -> bool:
    """An NPU agent of the stack, or a Pod asking for an NPU."""
    labels = pod["metadata"].get("labels") or {}
    if labels.get("app.kubernetes.io/part-of") == "ascend-npu" and \
            labels.get("app.kubernetes.io/component") in ("device-plugin", "exporter"):
        return True
    return any(name.startswith("huawei.com/Ascend") for container in pod["spec"].get("containers") or []
               for name in ((container.get("resources") or {}).get("limits") or {}))
