"""Evictions through the Eviction API: PodDisruptionBudgets decide, the drain retries until its deadline."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from components.drain.pods import name_of
from components.kubeapi.client import Api, ApiError

RETRY = 5.0  # seconds between tries of a refused eviction, as `kubectl drain` waits between its own


class DrainFailed(RuntimeError):
    """The drain could not empty the node in time; the message names each Pod left and why."""


@dataclass
class Progress:
    """Pods asked to leave, and the last refusal of each Pod still there."""

    evicted: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def _eviction(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]}}


def _gone(api: Api, pod: dict) -> bool:
    """Whether the Pod is deleted (a new Pod of the same name is another Pod)."""
    meta = pod["metadata"]
    now = api.find(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}")
    return now is None or now["metadata"].get("uid") != meta.get("uid")


def _ask(api: Api, pod: dict, progress: Progress, say: Callable[[str], None]) -> bool:
    """One eviction request; True once the API server accepted it (or the Pod is gone)."""
    meta, name = pod["metadata"], name_of(pod)
    try:
        api.post(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/eviction", _eviction(pod))
    except ApiError as err:
        if err.status == 404:
            return True
        if err.status in (429, 500, 0):  # 429: a budget says no; 500: several budgets; 0: no answer this time
            if progress.refused.get(name) != err.message:
                say(f"eviction of {name} refused, retrying every {RETRY:.0f} s: {err.message}")
            progress.refused[name] = err.message
            return False
        raise DrainFailed(f"eviction of {name} failed: {err}") from None
    progress.refused.pop(name, None)
    progress.evicted.append(name)
    say(f"evicted {name}")
    return True


def evict_all(api: Api, pods: list[dict], deadline: float, say: Callable[[str], None]) -> Progress:
    """Evict every Pod and wait until each is gone, or raise DrainFailed at the deadline (monotonic seconds)."""
    progress, waiting, asked = Progress(), list(pods), set()
    while waiting:
        for pod in list(waiting):
            name = name_of(pod)
            if name not in asked and _ask(api, pod, progress, say):
                asked.add(name)
            if name in asked and _gone(api, pod):
                waiting.remove(pod)
                say(f"{name} is gone")
        if not waiting:
            break
        if time.monotonic() >= deadline:
            raise DrainFailed("; ".join(
                f"{name_of(p)} " + ("still terminating" if name_of(p) in asked
                                    else f"not evicted: {progress.refused.get(name_of(p), 'no answer')}")
                for p in waiting))
        pause = RETRY if any(name_of(p) not in asked for p in waiting) else 1.0
        time.sleep(max(0.1, min(pause, deadline - time.monotonic())))
    return progress
