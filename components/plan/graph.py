"""A Mermaid picture of the recorded graph: components as boxes, resources inside, dependency arrows."""
from __future__ import annotations

from collections import defaultdict

from components.plan.recorder import Recorded


def _label(r: Recorded) -> str:
    kind = r.type.rsplit(":", 1)[-1]
    return f'"{kind}<br/>{r.name}"'


def mermaid(resources: list[Recorded]) -> str:
    """`flowchart LR` text; a resource's arrows come from the resources it depends on."""
    ids = {r.urn: f"r{i}" for i, r in enumerate(resources)}
    children: dict[str, list[Recorded]] = defaultdict(list)
    for r in resources:
        children[r.parent].append(r)
    lines = ["flowchart LR"]

    def emit(parent: str, depth: int) -> None:
        pad = "  " * depth
        for r in children.get(parent, []):
            if r.custom:
                lines.append(f"{pad}{ids[r.urn]}[{_label(r)}]")
            elif r.type == "pulumi:pulumi:Stack":
                emit(r.urn, depth)
            else:
                lines.append(f"{pad}subgraph {ids[r.urn]}[{_label(r)}]")
                emit(r.urn, depth + 1)
                lines.append(f"{pad}end")

    emit("", 1)
    for r in resources:
        for dep in r.dependencies:
            if dep in ids and dep != r.parent:
                lines.append(f"  {ids[dep]} --> {ids[r.urn]}")
    return "\n".join(lines) + "\n"
