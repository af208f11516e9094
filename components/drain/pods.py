"""Which Pods a drain evicts or waits for: NPU Pods and those the pod selector names, filtered as `kubectl drain`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from components.kubeapi.client import Api

# The device plugin advertises huawei.com/Ascend910, huawei.com/Ascend310P, ... and their virtual slices
# (huawei.com/Ascend910-2c, ...): every extended resource under this prefix is an NPU.
NPU_PREFIX = "huawei.com/Ascend"
MIRROR = "kubernetes.io/config.mirror"
# kubectl v0.36.3 pkg/drain/filters.go L33-35 says these in its own words; ours name the stack setting instead.
BARE = "Pods that declare no controller (nothing recreates them: set rollout.drain.force to evict them)"
LOCAL_DATA = ("Pods with emptyDir volumes (their data is deleted with them: set rollout.drain.deleteEmptyDirData "
              "to evict them)")


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


def controller_of(pod: dict) -> Optional[dict]:
    """The owner reference marked `controller: true` (metav1.GetControllerOf), or None for a bare Pod."""
    refs = (pod.get("metadata") or {}).get("ownerReferences") or []
    return next((ref for ref in refs if ref.get("controller")), None)


def finished(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def left_alone(pod: dict) -> Optional[str]:
    """Why a drain never touches this Pod (a DaemonSet's, a static Pod's mirror, finished), or None."""
    meta = pod.get("metadata") or {}
    if (controller_of(pod) or {}).get("kind") == "DaemonSet":
        return "a DaemonSet Pod (its controller would recreate it on the node)"
    if MIRROR in (meta.get("annotations") or {}):
        return "a static Pod (the kubelet owns it)"
    if finished(pod):
        return "finished (it holds no NPU)"
    return None


def refusals(pod: dict, force: bool, delete_empty_dir_data: bool) -> list[str]:
    """Why the Pod may not be evicted without an opt-in (filters.go localStorageFilter, unreplicatedFilter)."""
    volumes = (pod.get("spec") or {}).get("volumes") or []
    local = not delete_empty_dir_data and any("emptyDir" in volume for volume in volumes)
    return [LOCAL_DATA] * local + [BARE] * (not force and controller_of(pod) is None)


@dataclass
class Selection:
    """Pods to evict, Pods already terminating (awaited, never evicted again), and the refused, by reason."""

    evict: list[dict] = field(default_factory=list)
    awaited: list[dict] = field(default_factory=list)
    refused: dict[str, list[str]] = field(default_factory=dict)


def name_of(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def on_node(api: Api, node: str, selector: str = "") -> Iterable[dict]:
    """The node's Pods, all of them or those SELECTOR matches."""
    query = {"fieldSelector": f"spec.nodeName={node}"}
    if selector:
        query["labelSelector"] = selector
    return api.items("/api/v1/pods", **query)


def chosen(api: Api, node: str, selector: str) -> list[dict]:
    """The node's Pods that use NPUs or match SELECTOR, minus those a drain leaves alone; by name."""
    found = {name_of(p): p for p in on_node(api, node) if npu_requests(p) and left_alone(p) is None}
    if selector:
        found.update({name_of(p): p for p in on_node(api, node, selector) if left_alone(p) is None})
    return [found[name] for name in sorted(found)]


def select(pods: list[dict], force: bool, delete_empty_dir_data: bool) -> Selection:
    """Sort the chosen Pods: a terminating one is awaited (an eviction would cut its grace period short)."""
    selection = Selection()
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            selection.awaited.append(pod)
            continue
        whys = refusals(pod, force, delete_empty_dir_data)
        for why in whys:
            selection.refused.setdefault(why, []).append(name_of(pod))
        if not whys:
            selection.evict.append(pod)
    return selection
