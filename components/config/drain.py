"""How a node is emptied of NPU work before a host step that would kill it, and when it leaves the stack."""
from __future__ import annotations

import re
from typing import Optional

from pydantic import Field, field_validator

from components.config.base import SpecModel
from components.config.timeouts import bounded_seconds

# One requirement of a label selector as the API server parses it (k8s.io/apimachinery pkg/labels/selector.go):
# `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`.
_KEY = r"(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_REQUIREMENT = re.compile(rf"^(!?{_KEY}|{_KEY}\s*(=|==|!=)\s*{_VALUE}|{_KEY}\s+(in|notin)\s+\(\s*{_VALUE}"
                          rf"(\s*,\s*{_VALUE})*\s*\))$")


def requirements(selector: str) -> list[str]:
    """The selector's requirements: split on the commas that are not inside a value set."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return parts + [current.strip()] if selector.strip() else []


class Drain(SpecModel):
    """Before a driver, firmware or Docker-runtime change on a node in the cluster: cordon, evict, then uncordon."""

    enabled: bool = Field(True, description="Cordon the node and evict its NPU Pods through the Eviction API "
                                            "(PodDisruptionBudgets honoured) before a host change that would "
                                            "kill them, uncordon once the node verifies; false: a node with NPU "
                                            "work is refused instead (unless `allowDisruption`).")
    timeout: int = Field(600, description="Seconds the evictions may take (a PodDisruptionBudget may hold "
                                          "them) before the node is left cordoned and `up` fails, naming it.")
    pod_selector: str = Field("", description="Label selector of more Pods to evict besides those that request "
                                              "`huawei.com/Ascend*`, e.g. `app=inference`; DaemonSet Pods "
                                              "are never evicted.")
    force: bool = Field(False, description="Also evict NPU Pods that declare no controller (as `kubectl drain "
                                           "--force`): nothing recreates them. Default: such a Pod stops the drain, "
                                           "named, and the node stays cordoned.")
    delete_empty_dir_data: bool = Field(False, description="Also evict NPU Pods with emptyDir volumes, whose data "
                                                           "is deleted with them (as `kubectl drain "
                                                           "--delete-emptydir-data`). Default: such a Pod stops "
                                                           "the drain, named.")
    grace_period_seconds: Optional[int] = Field(None, description="Seconds each evicted Pod gets to stop (as "
                                                                  "`kubectl drain --grace-period`); unset: each "
                                                                  "Pod's own terminationGracePeriodSeconds.")

    @field_validator("timeout")
    @classmethod
    def _bounded(cls, value: int) -> int:
        return bounded_seconds(value, "a drain")

    @field_validator("grace_period_seconds")
    @classmethod
    def _grace(cls, value: Optional[int]) -> Optional[int]:
        if value is not None and not 0 <= value <= 24 * 3600:
            raise ValueError(f"{value} s is no grace period; write seconds from 0 (stop at once) to 86400, or leave "
                             "it out to keep each Pod's own")
        return value

    @field_validator("pod_selector")
    @classmethod
    def _selector(cls, value: str) -> str:
        for part in requirements(value):
            if not _REQUIREMENT.match(part):
                raise ValueError(f"'{part}' is no label selector requirement; write `key=value`, `key!=value`, "
                                 "`key in (a,b)`, `key` or `!key`, comma-separated")
        return value.strip()
