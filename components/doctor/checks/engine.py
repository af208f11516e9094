"""The container engine's config on the host: the `ascend` runtime present (and the default when asked for)."""
from __future__ import annotations

import json
import tomllib
from typing import Optional

from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec
from components.doctor.findings import ERROR, Finding, Kind
from components.doctor.remote import HostReport

HANDLER = "ascend"  # the RuntimeClass handler the cluster layer names (values_contract runtimeClass.handler)
RUNTIME_BINARY = "ascend-docker-runtime"
RUNTIME_MISSING = Kind("engine-runtime-missing", ERROR, "the container engine has no ascend runtime: Pods get no "
                       "/dev/davinci*")
NOT_DEFAULT = Kind("engine-runtime-not-default", ERROR, "the ascend runtime is not the engine's default, as "
                   "cluster.ascendDefaultRuntime asks")
KINDS = (RUNTIME_MISSING, NOT_DEFAULT)
FIX = "`pulumi up` merges the ascend runtime back into the engine's config and restarts the engine"


def _runtimes(config: dict) -> tuple[dict, Optional[str]]:
    """Every `...containerd.runtimes` table of a containerd config (1.x and 2.x layouts) and its default."""
    runtimes: dict = {}
    default = None
    for plugin in (config.get("plugins") or {}).values():
        inner = (plugin or {}).get("containerd") or {}
        runtimes.update(inner.get("runtimes") or {})
        default = inner.get("default_runtime_name") or default
    return runtimes, default


def check(spec: StackSpec, node: NodeSpec, report: HostReport) -> list[Finding]:
    if node.container_runtime is ContainerRuntime.DOCKER:
        where, text = "/etc/docker/daemon.json", report.body("file:daemon.json")
        try:
            doc = json.loads(text) if text.strip() else {}
        except ValueError:
            doc = {}
        path = ((doc.get("runtimes") or {}).get(HANDLER) or {}).get("path", "")
        has, default = path.endswith(RUNTIME_BINARY), doc.get("default-runtime")
    else:
        words = report.header("containerd").split()
        where = words[0] if words and words[0] != "-" else "/etc/containerd/config.toml"
        try:
            runtimes, default = _runtimes(tomllib.loads(report.body("containerd")))
        except tomllib.TOMLDecodeError:
            runtimes, default = {}, None
        options = (runtimes.get(HANDLER) or {}).get("options") or {}
        has = str(options.get("BinaryName", "")).endswith(RUNTIME_BINARY)
    if not has:
        return [RUNTIME_MISSING(node.name, f"{where} has no `{HANDLER}` runtime running {RUNTIME_BINARY}: Pods of "
                                "the RuntimeClass get no NPU devices", FIX)]
    if spec.cluster.ascend_default_runtime and default != HANDLER:
        return [NOT_DEFAULT(node.name, f"{where}: the default runtime is {default or 'runc'}, not {HANDLER} "
                            "(cluster.ascendDefaultRuntime)", FIX)]
    return []
