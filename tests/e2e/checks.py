"""What the day-2 scenarios read back: planned changes, uninstalls, cordons, eviction refusals, the upgrade timeline."""
from __future__ import annotations

import re
from datetime import datetime, timezone

from engine.kube import Kube
from tests.e2e import npu_workload as work
from tests.e2e.world import World

STEP_LINE = re.compile(r"^ [-+~]+\s+\S+ (\S+) (create|update|delete|replace)\b", re.MULTILINE)
# kube-apiserver's request counter for refused evictions (429: a budget says no), as its /metrics writes it.
EVICTIONS_REFUSED = re.compile(r'^apiserver_request_total\{([^}]*)\} (\d+)$', re.MULTILINE)


def planned_changes(preview_out: str) -> set[tuple[str, str]]:
    """(operation, resource name) of every step line of a plain `pulumi preview`."""
    return {(op, name) for name, op in STEP_LINE.findall(preview_out)}


def uninstalls(world: World, name: str) -> list:
    return [call for call in world.nodes[name].installer_calls() if "--uninstall" in call["args"]]


def node_object(world: World, name: str) -> dict:
    return world.kube.get(f"/api/v1/nodes/{name}")


def cordoned(world: World, name: str) -> bool:
    return bool(node_object(world, name)["spec"].get("unschedulable"))


def install_counts(world: World, names) -> dict[str, int]:
    return {name: len(world.install_starts(name)) for name in names}


def evictions_refused(kube: Kube) -> int:
    """How many evictions the API server has refused with 429 since it started."""
    text = kube.text("/metrics")
    return sum(int(count) for labels, count in EVICTIONS_REFUSED.findall(text)
               if 'subresource="eviction"' in labels and 'code="429"' in labels)


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def show_timeline(world: World, title: str, output: str, names, since: str) -> list[str]:
    lines = work.timeline(output, {name: world.nodes[name].root for name in names}, since)
    with (world.root / "timeline.txt").open("a") as out:
        out.write(f"\n# {title}\n" + "\n".join(lines) + "\n")
    print(f"e2e: {title}:\n" + "\n".join(lines), flush=True)
    return lines
