"""Pod pieces every NPU DaemonSet shares: placement, update strategy, resources, probes, host paths."""
from __future__ import annotations

from typing import Any, Optional

from components.cluster.common.metadata import metadata, selector_labels
from components.cluster.common.node_labels import NPU_TAINT_KEYS, READY
from components.releases.entries import Healthz


def tolerations(values: dict[str, Any]) -> list[dict[str, str]]:
    """Tolerate every NPU taint and `CriticalAddonsOnly`, plus the extra tolerations of the values."""
    npu = [{"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in NPU_TAINT_KEYS]
    return [{"key": "CriticalAddonsOnly", "operator": "Exists"}, *npu, *values["tolerations"]]


def node_selector(values: dict[str, Any], labels: dict[str, str]) -> dict[str, str]:
    """Select only nodes whose host layer succeeded (`ready`), narrowed by `labels` and the extra selector."""
    return {**values["nodeSelector"], **labels, READY: "true"}


def requests_equal_limits(resources: dict[str, str], extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Requests equal to limits: Guaranteed QoS, so node agents are the last to be evicted."""
    amounts = {"cpu": resources["cpu"], "memory": resources["memory"], **(extra or {})}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def http_liveness(port: int | str, path: str) -> dict[str, Any]:
    """A liveness probe that restarts an agent whose health endpoint stops answering."""
    return {"httpGet": {"path": path, "port": port}, "initialDelaySeconds": 15, "periodSeconds": 30,
            "timeoutSeconds": 5, "failureThreshold": 3}


def release_liveness(port: int | str, healthz: Healthz) -> dict[str, Any]:
    """The liveness probe a release's own manifest sets on its health endpoint (path and timings)."""
    return {"httpGet": {"path": healthz.path, "port": port}, **healthz.probe.manifest()}


def host_path(name: str, path: str, path_type: str = "") -> dict[str, Any]:
    """A hostPath volume; `path_type` makes the kubelet check what it mounts (Directory, Socket, ...)."""
    volume: dict[str, Any] = {"path": path}
    if path_type:
        volume["type"] = path_type
    return {"name": name, "hostPath": volume}


def daemonset(meta: dict[str, Any], app: str, pod_spec: dict[str, Any]) -> dict[str, Any]:
    """A DaemonSet replacing one node's pod at a time, selecting its pods by name and instance."""
    selector = selector_labels(app, meta["name"])
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {"metadata": {"labels": {**meta["labels"], **selector}}, "spec": pod_spec},
        },
    }


def service_account(values: dict[str, Any], name: str, component: str, version: str, token: bool) -> dict[str, Any]:
    """An operand's ServiceAccount in the agents' namespace; `token` mounts its API token in the pods."""
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": metadata(values, name, component, name, version, values["namespace"]),
            "automountServiceAccountToken": token}
