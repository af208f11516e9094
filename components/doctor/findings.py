"""A finding: its kind (a stable id with a page and a severity), the node, what was seen and the fix; shown for people
or as JSON, and the exit code it makes."""
from __future__ import annotations

import json
from dataclasses import dataclass

CLUSTER = "(cluster)"
PAGES = "docs/doctor"
# What each severity means for the exit code, in the order findings are shown.
ERROR, WARNING, UNREACHABLE, INFO = "error", "warning", "unreachable", "info"
SEVERITIES = (ERROR, WARNING, UNREACHABLE, INFO)
# Exit codes; when several apply the first of these wins: STACK_UNREADABLE, FINDINGS, UNCHECKED, HEALTHY.
HEALTHY, FINDINGS, STACK_UNREADABLE, UNCHECKED = 0, 1, 2, 3


@dataclass(frozen=True)
class Kind:
    """A kind of finding: its stable id (the name of its page, docs/doctor/<id>.md), severity and title."""

    id: str
    severity: str
    title: str

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"finding kind {self.id}: severity {self.severity!r} is not one of {SEVERITIES}")

    @property
    def page(self) -> str:
        return f"{PAGES}/{self.id}.md"

    def __call__(self, node: str, what: str, fix: str) -> Finding:
        return Finding(self.id, self.severity, self.title, node, what, fix)


@dataclass(frozen=True)
class Finding:
    """One problem of kind ID: the NODE (or CLUSTER), WHAT was seen, the FIX."""

    id: str
    severity: str
    title: str
    node: str
    what: str
    fix: str

    @property
    def page(self) -> str:
        return f"{PAGES}/{self.id}.md"

    def as_dict(self) -> dict:
        return {"id": self.id, "severity": self.severity, "page": self.page, "title": self.title,
                "node": self.node, "what": self.what, "fix": self.fix}


def exit_code(findings: list[Finding]) -> int:
    """FINDINGS on any error or warning, else UNCHECKED when a node or the API could not be checked, else HEALTHY."""
    severities = {f.severity for f in findings}
    if severities & {ERROR, WARNING}:
        return FINDINGS
    return UNCHECKED if UNREACHABLE in severities else HEALTHY


def counts(findings: list[Finding]) -> str:
    return ", ".join(f"{sum(f.severity == s for f in findings)} {s}" for s in SEVERITIES)


def human(stack: str, nodes: int, findings: list[Finding]) -> str:
    """The report for a terminal: a verdict, then each finding under its kind (id, title, page), worst first."""
    lines = [f"doctor: stack {stack}, {nodes} node(s) checked over SSH and the API"]
    code = exit_code(findings)
    if not findings:
        lines.append("healthy: no finding (npu-smi, versions, engine runtime, devices, plugin socket, allocatable, "
                     "agents, pending Pods, upgrade states)")
        return "\n".join(lines)
    verdict = {FINDINGS: "findings", UNCHECKED: "not every node could be checked", HEALTHY: "healthy"}[code]
    lines.append(f"{verdict} (exit {code}): {counts(findings)}")
    order = sorted({(SEVERITIES.index(f.severity), f.id) for f in findings})
    for _, kind in order:
        group = sorted((f for f in findings if f.id == kind), key=lambda f: f.node)
        first = group[0]
        lines.append(f"\n{first.severity.upper()} {first.id}: {first.title} (see {first.page})")
        for f in group:
            lines.append(f"  {f.node}: {f.what}")
            lines.append(f"    fix: {f.fix}")
    return "\n".join(lines)


def as_json(stack: str, nodes: int, findings: list[Finding]) -> str:
    return json.dumps({"stack": stack, "nodes": nodes, "exitCode": exit_code(findings),
                       "healthy": exit_code(findings) == HEALTHY,
                       "findings": [f.as_dict() for f in findings]}, indent=2)


def from_json(item: dict) -> Finding:
    """A finding back from its JSON form."""
    return Finding(*(item[k] for k in ("id", "severity", "title", "node", "what", "fix")))
