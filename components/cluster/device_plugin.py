"""The Ascend device plugin: one DaemonSet per chip type present, as MindCluster's manifest runs it."""
from __future__ import annotations

from typing import Any

from components.cluster.labels import image_reference, image_version, metadata
from components.cluster.node_labels import ACCELERATOR, ACCELERATORS, CHIP
from components.cluster.pods import daemonset, host_path, http_liveness, node_selector, requests_equal_limits, \
    tolerations
from components.cluster.rbac import DEVICE_PLUGIN_SA

APP = "ascend-device-plugin"
LOG_DIR = "/var/log/mindx-dl/devicePlugin"
MOUNTS = (  # (volume, path on host and in the container, hostPath type, read-only)
    ("device-plugin", "/var/lib/kubelet/device-plugins", "Directory", False),
    ("pod-resource", "/var/lib/kubelet/pod-resources", "Directory", False),
    ("hiai-driver", "/usr/local/Ascend/driver", "Directory", True),
    ("log-path", LOG_DIR, "DirectoryOrCreate", False),  # its own log directory, not all of /var/log
    ("tmp", "/tmp", "Directory", False),
    ("localtime", "/etc/localtime", "", True),
)


def daemonset_name(chip: str) -> str:
    """`ascend-device-plugin-910b` for chip `910B`."""
    return f"{APP}-{chip.lower()}"


def plugin_args(values: dict[str, Any]) -> list[str]:
    """The plugin's flags: Ascend Docker Runtime injection, log file, healthz; Volcano mode on request."""
    plugin = values["devicePlugin"]
    args = ["-useAscendDocker=true", f"-volcanoType={'true' if plugin['volcano'] else 'false'}"]
    if plugin["volcano"]:
        args.append("-presetVirtualDevice=true")
    args += [f"-logFile={LOG_DIR}/devicePlugin.log", "-logLevel=0",
             "--enable-healthz=true", f"--healthz-address={plugin['healthzPort']}"]
    return args


def _pod_spec(values: dict[str, Any], chip: str) -> dict[str, Any]:
    plugin = values["devicePlugin"]
    container = {
        "name": "device-plugin",
        "image": image_reference(plugin["image"]),
        "imagePullPolicy": plugin["image"]["pullPolicy"],
        "command": ["device-plugin"],
        "args": plugin_args(values),
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "ports": [{"name": "healthz", "containerPort": plugin["healthzPort"], "protocol": "TCP"}],
        "resources": requests_equal_limits(plugin["resources"]),
        "livenessProbe": http_liveness("healthz", "/healthz"),
        # Privileged: it opens /dev/davinci* and the driver's management devices on the host.
        "securityContext": {"privileged": True, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": name, "mountPath": path, **({"readOnly": True} if ro else {})}
                         for name, path, _, ro in MOUNTS],
    }
    return {
        "serviceAccountName": DEVICE_PLUGIN_SA,
        "automountServiceAccountToken": True,
        "priorityClassName": plugin["priorityClassName"],
        "nodeSelector": node_selector(values, {ACCELERATOR: ACCELERATORS[chip], CHIP: chip}),
        "tolerations": tolerations(values),
        "containers": [container],
        "volumes": [host_path(name, path, kind) for name, path, kind, _ in MOUNTS],
    }


def build_device_plugin_daemonsets(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One DaemonSet per chip type in the stack, each on the ready nodes of that chip."""
    plugin = values["devicePlugin"]
    result = []
    for chip in plugin["chips"]:
        name = daemonset_name(chip)
        meta = metadata(values, name, "device-plugin", APP, image_version(plugin["image"]), values["namespace"],
                        labels={CHIP: chip})
        result.append(daemonset(meta, APP, _pod_spec(values, chip)))
    return result
