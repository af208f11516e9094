"""The NPU exporter's DaemonSets, one per container engine with its release's flags, and its ServiceAccount."""
from __future__ import annotations

from typing import Any, Optional

from components.cluster.common.metadata import image_reference, image_version, metadata, pull_secrets
from components.cluster.common.node_labels import CONTAINER_RUNTIME
from components.cluster.common.pod_parts import (
    daemonset,
    host_path,
    http_liveness,
    node_selector,
    release_liveness,
    requests_equal_limits,
    service_account,
    tolerations,
)
from components.cluster.common.template_functions import template_function
from components.releases.catalog import release_entry
from components.releases.entries import NpuExporter

COMPONENT = "npu-exporter"
APP = "npu-exporter"
EXPORTER_SA = "npu-exporter"
PORT_NAME = "http-metrics"
LOG_DIR = "/var/log/mindx-dl/npu-exporter"
COMMON_MOUNTS = (  # (volume, path on host and in the container, hostPath type, read-only)
    ("log-npu-exporter", LOG_DIR, "DirectoryOrCreate", False),
    ("localtime", "/etc/localtime", "", True),
    ("ascend-driver", "/usr/local/Ascend/driver", "Directory", True),
    ("ascend-dcmi", "/usr/local/dcmi", "Directory", True),
    ("sys", "/sys", "Directory", True),
    ("tmp", "/tmp", "Directory", False),
)
# Where each engine's sockets live. Docker runs its containers through the system containerd, and on
# Kubernetes 1.24+ the kubelet reaches Docker through cri-dockerd, the CRI endpoint the exporter asks. Paths are
# under /run, never /var/run: the exporter refuses a socket path that passes through a symlink.
CONTAINERD = ("containerd", "/run/containerd", "Directory", True)
ENGINE_MOUNTS = {
    "containerd": (CONTAINERD,),
    "docker": (CONTAINERD, ("docker", "/run/docker", "Directory", True),
               ("cri-dockerd", "/run/cri-dockerd.sock", "Socket", True)),
}
ENGINE_ARGS = {
    "containerd": ["-containerMode=containerd", "-containerd=/run/containerd/containerd.sock",
                   "-endpoint=/run/containerd/containerd.sock"],
    "docker": ["-containerMode=docker", "-containerd=/run/containerd/containerd.sock",
               "-endpoint=/run/cri-dockerd.sock"],
}


def daemonset_name(engine: str) -> str:
    """`npu-exporter-containerd` for engine `containerd`."""
    return f"{APP}-{engine}"


def exporter_meta(values: dict[str, Any], name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    exporter = values["exporter"]
    return metadata(values, name, "exporter", APP, image_version(exporter["image"]), values["namespace"], labels)


def exporter_release(values: dict[str, Any]) -> NpuExporter:
    """The catalog entry of the pinned exporter release."""
    return release_entry(COMPONENT, values["exporter"]["release"])


@template_function("ascend-npu.updateTimeArgs")
def update_time_args(update_time: Optional[int], manifest: Optional[int]) -> list[str]:
    """`-updateTime=<n>`: the configured interval, else the release manifest's (v26.1.0 passes none)."""
    chosen = manifest if update_time is None else update_time
    return [] if chosen is None else [f"-updateTime={chosen}"]


def exporter_args(values: dict[str, Any], engine: str) -> list[str]:
    """The release's own flags (port, interval, log; its -containerMode is the engine's), the engine's sockets,
    and healthz where it has it."""
    exporter, release = values["exporter"], exporter_release(values)
    args: list[str] = []
    for arg in release.args:
        if arg == "{updateTime}":
            args += update_time_args(exporter["updateTime"], release.update_time)
        elif not arg.startswith("-containerMode="):
            args.append(arg.format(port=exporter["port"]))
    return args + ENGINE_ARGS[engine] + (release.healthz.flags if release.healthz else [])


def _pod_spec(values: dict[str, Any], engine: str) -> dict[str, Any]:
    exporter, release = values["exporter"], exporter_release(values)
    mounts = COMMON_MOUNTS + ENGINE_MOUNTS[engine]
    healthz = release.healthz
    ports = [{"name": PORT_NAME, "containerPort": exporter["port"], "protocol": "TCP"}]
    if healthz:
        ports.append({"name": "healthz", "containerPort": healthz.port, "protocol": "TCP"})
    container = {
        "name": "npu-exporter",
        "image": image_reference(exporter["image"], values["images"]["registry"]),
        "imagePullPolicy": exporter["image"]["pullPolicy"],
        "command": ["npu-exporter"],
        "args": exporter_args(values, engine),
        "ports": ports,
        "resources": requests_equal_limits(exporter["resources"]),
        # The release's health endpoint; without one, the index page the metrics listener serves at `/`.
        "livenessProbe": release_liveness("healthz", healthz) if healthz else http_liveness(PORT_NAME, "/"),
        # Privileged as root: DCMI reads the chips through the driver's devices.
        "securityContext": release.security_context.manifest(),
        "volumeMounts": [{"name": name, "mountPath": path, **({"readOnly": True} if ro else {})}
                         for name, path, _, ro in mounts],
    }
    return {
        "serviceAccountName": EXPORTER_SA,
        "automountServiceAccountToken": False,
        "priorityClassName": exporter["priorityClassName"],
        "nodeSelector": node_selector(values, {CONTAINER_RUNTIME: engine}),
        "tolerations": tolerations(values),
        "containers": [container],
        "volumes": [host_path(name, path, kind) for name, path, kind, _ in mounts],
        **pull_secrets(values["images"]),
    }


def build_exporter_daemonsets(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One DaemonSet per engine in the stack, each on the ready nodes of that engine."""
    result = []
    for engine in values["exporter"]["containerRuntimes"]:
        meta = exporter_meta(values, daemonset_name(engine), {CONTAINER_RUNTIME: engine})
        result.append(daemonset(meta, APP, _pod_spec(values, engine)))
    return result


def build_exporter_service_account(values: dict[str, Any]) -> dict[str, Any]:
    """The exporter's ServiceAccount; the exporter never calls the API server, so no token."""
    return service_account(values, EXPORTER_SA, "exporter", image_version(values["exporter"]["image"]), token=False)
