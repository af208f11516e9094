"""Evictions through the Eviction API: PodDisruptionBudgets decide, the drain retries until its deadline."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from components.drain.budgets import SEVERAL, covering
from components.drain.pods import name_of
from components.kubeapi.client import Api, ApiError

RETRY = 5.0  # seconds between tries of a refused eviction, as `kubectl drain` waits between its own
# The cause a Status carries when the Pod's namespace is being deleted (k8s.io/api core/v1 NamespaceTerminatingCause).
NAMESPACE_TERMINATING = "NamespaceTerminating"


class DrainFailed(RuntimeError):
    """The drain could not empty the node in time; the message names each Pod left and why."""


@dataclass
class Progress:
    """Pods asked to leave, and the last refusal of each Pod still there."""

    evicted: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def _eviction(pod: dict, grace: Optional[int]) -> dict:
    meta = pod["metadata"]
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]}}
    if grace is not None:  # as kubectl --grace-period: the DeleteOptions the eviction carries
        body["deleteOptions"] = {"gracePeriodSeconds": grace}
    return body


def _terminating(pod: dict) -> str:
    """How a Pod already being deleted is said: since when, and the grace period it was given."""
    meta = pod["metadata"]
    grace = meta.get("deletionGracePeriodSeconds")
    return f"terminating since {meta.get('deletionTimestamp')}" + (f" (grace period {grace} s)" if grace else "")


def _gone(api: Api, pod: dict) -> bool:
    """Whether the Pod is deleted (a new Pod of the same name is another Pod)."""
    meta = pod["metadata"]
    now = api.find(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}")
    return now is None or now["metadata"].get("uid") != meta.get("uid")


def _ask(api: Api, pod: dict, progress: Progress, say: Callable[[str], None], grace: Optional[int]) -> bool:
    """One eviction request; True once the API server accepted it (or the Pod is gone, or going)."""
    meta, name = pod["metadata"], name_of(pod)
    try:
        api.post(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/eviction", _eviction(pod, grace))
    except ApiError as err:
        # As kubectl v0.36.3 pkg/drain/drain.go evictPods (lines 308-328): 404 done; 429 (a budget says no) retried;
        # 403 NamespaceTerminating awaited (a Pod already deleted is then waited for, else retried); anything else,
        # such as 500 for a Pod under several budgets, which no wait fixes, fails at once. One difference: no answer
        # at all (0) is retried, so a connection lost during a long drain does not fail the upgrade.
        terminating_namespace = err.status == 403 and NAMESPACE_TERMINATING in err.causes
        if err.status == 404 or (terminating_namespace and meta.get("deletionTimestamp")):
            return True
        if err.status in (429, 0) or terminating_namespace:
            if progress.refused.get(name) != err.message:
                say(f"eviction of {name} refused, retrying every {RETRY:.0f} s: {err.message}")
            progress.refused[name] = err.message
            return False
        detail = f" ({covering(api, pod)})" if SEVERAL in err.message else ""
        raise DrainFailed(f"eviction of {name} failed: {err}{detail}") from None
    progress.refused.pop(name, None)
    progress.evicted.append(name)
    say(f"evicted {name}")
    return True


def _left(pod: dict, asked: set[str], progress: Progress, awaited: tuple[dict, ...], grace: Optional[int]) -> str:
    """One Pod still there at the deadline, and why."""
    name = name_of(pod)
    if any(name_of(p) == name for p in awaited):
        return f"{name} still {_terminating(pod)}"
    if name in asked:
        given = grace if grace is not None else (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        return f"{name} still terminating" + (f" (grace period {given} s)" if given is not None else "")
    return f"{name} not evicted: {progress.refused.get(name, 'no answer')}"


def evict_all(api: Api, pods: list[dict], deadline: float, say: Callable[[str], None],
              clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
              grace: Optional[int] = None, awaited: tuple[dict, ...] = ()) -> Progress:
    """Evict every Pod, wait until each (and each AWAITED one, already terminating) is gone, or raise DrainFailed
    at the deadline (CLOCK's seconds)."""
    progress, waiting, asked = Progress(), list(pods) + list(awaited), {name_of(p) for p in awaited}
    for pod in awaited:
        say(f"waiting for {name_of(pod)}, {_terminating(pod)}")
    while waiting:
        for pod in list(waiting):
            name = name_of(pod)
            if name not in asked and _ask(api, pod, progress, say, grace):
                asked.add(name)
            if name in asked and _gone(api, pod):
                waiting.remove(pod)
                say(f"{name} is gone")
        if not waiting:
            break
        if clock() >= deadline:
            raise DrainFailed("; ".join(_left(p, asked, progress, awaited, grace) for p in waiting))
        pause = RETRY if any(name_of(p) not in asked for p in waiting) else 1.0
        sleep(max(0.1, min(pause, deadline - clock())))
    return progress
