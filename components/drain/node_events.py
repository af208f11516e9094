"""Each upgrade-state transition as a Kubernetes Event on the Node, shown by `kubectl describe node`."""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Callable, Optional

from components.drain import node_state as state
from components.kubeapi.client import Api, ApiError

# Events of a cluster-scoped object live in `default`, as the kubelet's own Node events do; kubectl v0.36.3
# pkg/describe/describe.go L3461-3477 finds a Node's events by kind, name and its uid (or its name as uid).
NAMESPACE = "default"
COMPONENT = "ascend-npu-drain"
REASONS = {state.DRAINING: "AscendNpuDraining", state.DRAIN_FAILED: "AscendNpuDrainFailed",
           state.UPGRADING: "AscendNpuUpgrading", state.DONE: "AscendNpuUpgradeDone",
           state.LEAVING: "AscendNpuLeaving", None: "AscendNpuLeft"}
WARNINGS = (state.DRAIN_FAILED,)


def event(node: dict, new_state: Optional[str], message: str, now: datetime) -> dict:
    """A core/v1 Event about NODE entering NEW_STATE (None: the drain's marks removed)."""
    meta = node["metadata"]
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Event",
            # The name client-go's recorder gives (tools/record/event.go makeEvent): object name, then UnixNano hex.
            "metadata": {"name": f"{meta['name']}.{int(now.timestamp() * 1e9):x}", "namespace": NAMESPACE},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid", "")},
            "reason": REASONS[new_state], "message": message[:1024],
            "type": "Warning" if new_state in WARNINGS else "Normal",
            "source": {"component": COMPONENT}, "reportingComponent": COMPONENT,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1}


def record(api: Api, node: dict, new_state: Optional[str], message: str, say: Callable[[str], None],
           clock: Callable[[], float] = time.time) -> None:
    """Post the Event; one the API refuses is said, never fatal (the label and its time are already on the Node)."""
    now = datetime.fromtimestamp(clock(), timezone.utc)
    try:
        api.post(f"/api/v1/namespaces/{NAMESPACE}/events", event(node, new_state, message, now))
    except ApiError as err:
        say(f"event {REASONS[new_state]} not recorded: {err} (the drain needs create events in {NAMESPACE})")
