"""A node's upgrade state (the drain's label and when it began): stopped, stuck past its time limit, or under way."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from components.config import StackSpec
from components.config.timeouts import DEFAULTS
from components.doctor.findings import ERROR, INFO, WARNING, Finding, Kind
from components.drain import node_state

STOPPED = Kind("upgrade-stopped", ERROR, "an upgrade or removal stopped on this node (the drain failed)")
STUCK = Kind("upgrade-stuck", ERROR, "a node has been in an upgrade state longer than its time limit")
UNDATED = Kind("upgrade-state-undated", WARNING, "a node is in an upgrade state since a time nobody recorded")
UNDER_WAY = Kind("upgrade-in-progress", INFO, "an upgrade or removal is under way on this node, within its limit")
KINDS = (STOPPED, STUCK, UNDATED, UNDER_WAY)
TIMES = "%Y-%m-%dT%H:%M:%SZ"
FIX = ("fix what the last `up` named for this node, then `pulumi up` again: it resumes and uncordons the node once it "
       "verifies")


def limit(spec: StackSpec, state: str) -> tuple[int, str]:
    """Seconds a node may stay in STATE, and the setting that says so."""
    if state == node_state.UPGRADING:
        timeouts = spec.rollout.timeouts
        return sum(getattr(timeouts, name) for name in DEFAULTS), "the sum of rollout.timeouts"
    return spec.rollout.drain.timeout, "rollout.drain.timeout"


def since(obj: dict) -> Optional[datetime]:
    """When the node's state began, from its annotation; None when absent or not RFC 3339 UTC."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(node_state.SINCE)
    try:
        return datetime.strptime(text, TIMES).replace(tzinfo=timezone.utc) if text else None
    except ValueError:
        return None


def duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min {int(seconds % 60)} s"


def check(spec: StackSpec, node: str, obj: dict, now: datetime) -> list[Finding]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    state = labels.get(node_state.STATE)
    if state not in (node_state.DRAINING, node_state.DRAIN_FAILED, node_state.UPGRADING, node_state.LEAVING):
        return []
    cordon = "cordoned" if (obj.get("spec") or {}).get("unschedulable") else "not cordoned"
    began = since(obj)
    when = f" since {began.strftime(TIMES)} ({duration((now - began).total_seconds())})" if began else ""
    if state == node_state.DRAIN_FAILED:
        return [STOPPED(node, f"{node_state.STATE}={state}{when}, {cordon}: the last `up` stopped here (a drain "
                        "that timed out, or a host step that failed)", FIX)]
    if began is None:
        return [UNDATED(node, f"{node_state.STATE}={state}, {cordon}; since when is unknown (no {node_state.SINCE} "
                        "annotation: set by a release before it was written)", "if no `pulumi up` is running, "
                        + FIX)]
    seconds, setting = limit(spec, state)
    if (now - began).total_seconds() > seconds:
        return [STUCK(node, f"{node_state.STATE}={state}{when}, {cordon}: longer than {setting} ({seconds} s)",
                      f"if no `pulumi up` is running, {FIX}; if one is, read its output for this node")]
    return [UNDER_WAY(node, f"{node_state.STATE}={state}{when}, {cordon}: within {setting} ({seconds} s)",
                      "nothing to do while `pulumi up` runs; run the doctor again after it")]
