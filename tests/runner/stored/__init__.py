"""What each earlier release stored for a node's host steps (record.py writes one file per release)."""
from __future__ import annotations

from pathlib import Path

import yaml

HERE = Path(__file__).parent


def releases() -> dict[str, dict[str, list[dict]]]:
    """Commit -> stack -> the stored command resources of node `fake-npu-01`, oldest release first."""
    found = {}
    for path in HERE.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        found[doc["commit"]] = doc["stacks"]
    return dict(sorted(found.items(), key=lambda item: ORDER.index(item[0])))


# Releases in the order they landed; record.py's files are named by these.
ORDER = ("727ce57", "b3f3745", "b452938", "43e7d7f", "5c09365", "9bf5a50", "48a258d")
# Those whose local `-destroy` step runs the destroy (before them, a remote `-on-destroy` did).
LOCAL_DESTROY = ("43e7d7f", "5c09365", "9bf5a50", "48a258d")


def resource(stacks: dict, stack: str, name: str) -> dict:
    """The stored resource of NAME (its suffix after the node's name) in STACK."""
    return next(r for r in stacks[stack] if r["name"] == name)


REPLAYED = ("delete", "environment", "stdin")


def distinct(name: str, commits: tuple[str, ...] = ORDER) -> list[tuple[str, str, dict]]:
    """(commit, stack, resource) of each distinct form of what NAME's resource replays (REPLAYED) among COMMITS, the
    first release that stored it named: a form stored unchanged by later releases is run once."""
    found: dict[str, tuple[str, str, dict]] = {}
    for commit in commits:
        for stack, resources in releases()[commit].items():
            stored = next((r for r in resources if r["name"] == name), None)
            if stored is not None:
                replayed = {field: stored.get(field) for field in REPLAYED}
                found.setdefault(yaml.safe_dump(replayed, sort_keys=True), (commit, stack, stored))
    return list(found.values())
