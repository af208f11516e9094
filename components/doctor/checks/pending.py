"""Pending Pods asking for NPUs: a resource name no node advertises, or only tainted nodes that have it."""
from __future__ import annotations

from typing import Optional

from components.doctor.findings import CLUSTER, WARNING, Finding, Kind
from components.drain.pods import NPU_PREFIX, npu_requests

RESOURCE_NAME = Kind("pending-resource-name", WARNING, "a Pod stays Pending on an NPU resource no node advertises")
TAINTED = Kind("pending-taint", WARNING, "a Pod stays Pending: every node with its NPUs has a taint it does not "
               "tolerate")
KINDS = (RESOURCE_NAME, TAINTED)


def allocatable(node: dict) -> dict[str, int]:
    """The node's allocatable `huawei.com/Ascend*` counts."""
    found = {}
    for name, value in ((node.get("status") or {}).get("allocatable") or {}).items():
        if name.startswith(NPU_PREFIX):
            try:
                found[name] = int(value)
            except ValueError:
                continue
    return found


def tolerates(tolerations: Optional[list[dict]], taint: dict) -> bool:
    """Whether a toleration matches the taint (core/v1 Toleration.ToleratesTaint)."""
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def check(pods: list[dict], nodes: list[dict]) -> list[Finding]:
    counts = {n["metadata"]["name"]: allocatable(n) for n in nodes}
    advertised: dict[str, set[str]] = {}
    for name, resources in counts.items():
        for resource, count in resources.items():
            offering = advertised.setdefault(resource, set())
            if count > 0:
                offering.add(name)
    found = []
    for pod in pods:
        wants = npu_requests(pod)
        if not wants or (pod.get("status") or {}).get("phase") != "Pending" or (pod.get("spec") or {}).get("nodeName"):
            continue
        name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        unknown = [r for r in wants if not advertised.get(r)]
        if unknown:
            offered = ", ".join(sorted(r for r, ns in advertised.items() if ns)) or "none"
            found.append(RESOURCE_NAME(CLUSTER, f"{name} asks for {', '.join(unknown)}, which no node advertises "
                                       f"(advertised: {offered})", "write the resource name a node advertises "
                                       "(`kubectl describe node`), e.g. huawei.com/Ascend910 for 910B"))
            continue
        able = [n for n in nodes if all(n["metadata"]["name"] in advertised[r] for r in wants)]
        blocking = {n["metadata"]["name"]: [t for t in (n.get("spec") or {}).get("taints") or []
                                            if t.get("effect") in ("NoSchedule", "NoExecute")
                                            and not tolerates((pod.get("spec") or {}).get("tolerations"), t)]
                    for n in able}
        if able and all(blocking.values()):
            first = next(iter(blocking.items()))
            taint = first[1][0]
            found.append(TAINTED(CLUSTER, f"{name}: every node with {', '.join(wants)} is tainted without a "
                                 f"toleration in the Pod (e.g. {first[0]}: {taint.get('key')}={taint.get('value', '')}"
                                 f":{taint.get('effect')})", "add a toleration for that taint to the Pod, or remove "
                                 "the taint"))
    return found
