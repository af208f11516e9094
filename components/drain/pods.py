"""Which Pods a drain evicts: those requesting an Ascend NPU, and those the stack's pod selector names."""
from __future__ import annotations

from typing import Iterable, Optional

from components.kubeapi.client import Api

# The device plugin advertises huawei.com/Ascend910, huawei.com/Ascend310P, ... and their virtual slices
# (huawei.com/Ascend910-2c, ...): every extended resource under this prefix is an NPU.
NPU_PREFIX = "huawei.com/Ascend"
MIRROR = "kubernetes.io/config.mirror"


def npu_requests(pod: dict) -> dict[str, str]:
    """The NPU resources the Pod's containers (init containers too) ask for, summed by name as text."""
    found: dict[str, int] = {}
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for key in ("limits", "requests"):
            for name, value in (resources.get(key) or {}).items():
                if name.startswith(NPU_PREFIX):
                    found[name] = max(found.get(name, 0), _count(value))
    return {name: str(count) for name, count in sorted(found.items())}


def _count(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 1


def left_alone(pod: dict) -> Optional[str]:
    """Why a drain never evicts this Pod (a DaemonSet's, a static Pod's mirror, finished), or None."""
    meta = pod.get("metadata") or {}
    if any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or []):
        return "a DaemonSet Pod (its controller would recreate it on the node)"
    if MIRROR in (meta.get("annotations") or {}):
        return "a static Pod (the kubelet owns it)"
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return "finished"
    if meta.get("deletionTimestamp"):
        return "already being deleted"
    return None


def name_of(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def on_node(api: Api, node: str, selector: str = "") -> Iterable[dict]:
    """The node's Pods, all of them or those SELECTOR matches."""
    query = {"fieldSelector": f"spec.nodeName={node}"}
    if selector:
        query["labelSelector"] = selector
    return api.items("/api/v1/pods", **query)


def to_evict(api: Api, node: str, selector: str) -> list[dict]:
    """The node's Pods that use NPUs or match SELECTOR, minus those a drain leaves alone; by name."""
    chosen = {name_of(p): p for p in on_node(api, node) if npu_requests(p) and left_alone(p) is None}
    if selector:
        chosen.update({name_of(p): p for p in on_node(api, node, selector) if left_alone(p) is None})
    return [chosen[name] for name in sorted(chosen)]
