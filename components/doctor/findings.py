"""A finding: the field symptom it explains, the node, what was seen and the fix; shown for people or as JSON."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

# The symptoms of the field report's troubleshooting section (section 7), and the doctor's own two.
SYMPTOMS = {
    "7.1": "the device plugin reports 0 NPUs",
    "7.2": "Pods stay Pending on NPU resources",
    "7.3": "no /dev/davinci* inside the container",
    "7.4": "operator errors from a CANN, driver or firmware mismatch",
    "6": "NPU metrics missing from Prometheus (the exporter)",
    "upgrade": "an upgrade or removal stopped on this node",
    "unchecked": "the node could not be checked",
}
CLUSTER = "(cluster)"


@dataclass(frozen=True)
class Finding:
    """One problem: SYMPTOM (a key of SYMPTOMS), NODE (or CLUSTER), CHECK that saw it, WHAT it saw, the FIX."""

    symptom: str
    node: str
    check: str
    what: str
    fix: str

    def explains(self) -> str:
        return f"{self.symptom} {SYMPTOMS[self.symptom]}" if self.symptom[0].isdigit() else SYMPTOMS[self.symptom]


def human(stack: str, nodes: int, findings: list[Finding]) -> str:
    """The report for a terminal: a verdict, then each finding under the symptom it explains."""
    lines = [f"doctor: stack {stack}, {nodes} node(s) checked over SSH and the API"]
    if not findings:
        lines.append("healthy: no finding (npu-smi, versions, engine runtime, devices, plugin socket, allocatable, "
                     "agents, pending Pods, drains)")
        return "\n".join(lines)
    lines.append(f"{len(findings)} finding(s):")
    for symptom in SYMPTOMS:
        group = [f for f in findings if f.symptom == symptom]
        if not group:
            continue
        lines.append(f"\n{group[0].explains()}:")
        for f in sorted(group, key=lambda f: (f.node, f.check)):
            lines.append(f"  {f.node} [{f.check}] {f.what}")
            lines.append(f"    fix: {f.fix}")
    return "\n".join(lines)


def as_json(stack: str, nodes: int, findings: list[Finding]) -> str:
    return json.dumps({"stack": stack, "nodes": nodes, "healthy": not findings,
                       "findings": [{**asdict(f), "explains": f.explains()} for f in findings]}, indent=2)
