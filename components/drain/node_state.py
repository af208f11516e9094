"""What a drain writes on the Node: the cordon it owns, the upgrade state as a label anyone can select on, and
since when the node is in that state."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from components.kubeapi.client import Api

STATE = "ascend-npu.io/upgrade-state"
# When the node entered its STATE (RFC 3339, UTC): the doctor finds a node stuck longer than its step may take.
SINCE = "ascend-npu.io/upgrade-state-since"
# Set only when the drain cordoned the node itself, so a node someone else cordoned stays cordoned after.
CORDONED_BY = "ascend-npu.io/cordoned-by"
OWNER = "ascend-npu"
# The label's values, in the order an upgrade passes them.
DRAINING, DRAIN_FAILED, UPGRADING, DONE, LEAVING = "draining", "drain-failed", "upgrading", "upgrade-done", "leaving"


def node_path(name: str) -> str:
    return f"/api/v1/nodes/{name}"


def find_node(api: Api, name: str) -> Optional[dict]:
    return api.find(node_path(name))


def cordoned(node: dict) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def ours(node: dict) -> bool:
    """Whether the node's cordon is the drain's own."""
    return ((node.get("metadata") or {}).get("annotations") or {}).get(CORDONED_BY) == OWNER


def stamp(now: Optional[datetime] = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _state(state: Optional[str]) -> dict:
    """The metadata patch of a state: its label and since when (None removes both)."""
    return {"labels": {STATE: state}, "annotations": {SINCE: stamp() if state else None}}


def state_of(node: Optional[dict]) -> Optional[str]:
    return (((node or {}).get("metadata") or {}).get("labels") or {}).get(STATE)


def cordon(api: Api, node: dict, state: str) -> bool:
    """Mark the node unschedulable (owning the cordon only if it was schedulable) and label its STATE; whether
    the cordon is ours."""
    mine = ours(node) or not cordoned(node)
    meta = _state(state)
    if mine:
        meta["annotations"][CORDONED_BY] = OWNER
    api.merge_patch(node_path(node["metadata"]["name"]), {"metadata": meta, "spec": {"unschedulable": True}})
    return mine


def set_state(api: Api, name: str, state: Optional[str]) -> None:
    """Label the node with STATE (None removes the label)."""
    api.merge_patch(node_path(name), {"metadata": _state(state)})


def release(api: Api, node: dict, state: Optional[str]) -> bool:
    """Uncordon the node if the cordon is ours, label STATE (None: no label); whether it was uncordoned."""
    mine = ours(node)
    patch: dict = {"metadata": _state(state)}
    if mine:
        patch["metadata"]["annotations"][CORDONED_BY] = None
        patch["spec"] = {"unschedulable": None}
    api.merge_patch(node_path(node["metadata"]["name"]), patch)
    return mine
