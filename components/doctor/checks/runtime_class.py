"""The RuntimeClass `ascend` NPU Pods name, with the handler the engines' configs define."""
from __future__ import annotations

from typing import Optional

from components.doctor.checks.engine import HANDLER
from components.doctor.findings import CLUSTER, ERROR, Finding, Kind

RUNTIME_CLASS_MISSING = Kind("runtimeclass-missing", ERROR, "the RuntimeClass ascend is missing or has another "
                             "handler: NPU Pods get no /dev/davinci*")
KINDS = (RUNTIME_CLASS_MISSING,)
PATH = "/apis/node.k8s.io/v1/runtimeclasses/ascend"


def check(default_runtime: bool, found: Optional[dict]) -> list[Finding]:
    """FOUND is the RuntimeClass the API returned (None: there is none); nothing to check with ascendDefaultRuntime."""
    if default_runtime or (found is not None and found.get("handler") == HANDLER):
        return []
    what = "RuntimeClass ascend is missing" if found is None else f"RuntimeClass ascend has handler {found['handler']}"
    return [RUNTIME_CLASS_MISSING(CLUSTER, f"{what}: NPU Pods run on the engine's default runtime",
                                  "`pulumi up` creates it (handler ascend)")]
