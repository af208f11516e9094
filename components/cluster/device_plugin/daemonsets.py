"""The Ascend device plugin: one DaemonSet per chip type present (and per container engine, where the pinned release's
duplicate-NPU detector needs an engine's own socket), with the flags and probes of its pinned release."""
from __future__ import annotations

from typing import Any, Optional

from components.cluster.common.metadata import image_reference, image_version, metadata, pull_secrets
from components.cluster.common.node_labels import ACCELERATOR, ACCELERATORS, CHIP, CONTAINER_RUNTIME
from components.cluster.common.pod_parts import (
    daemonset,
    host_path,
    node_selector,
    release_liveness,
    requests_equal_limits,
    tolerations,
)
from components.cluster.device_plugin.rbac import DEVICE_PLUGIN_SA
from components.releases.catalog import release_entry
from components.releases.entries import DevicePlugin

COMPONENT = "device-plugin"

APP = "ascend-device-plugin"
LOG_DIR = "/var/log/mindx-dl/devicePlugin"
Mount = tuple[str, str, str, bool]  # (volume, path on host and in the container, hostPath type, read-only)
# Where we differ from the release's mounts (README, "Where we differ from the official manifests"): its own
# log directory, created when missing, never all of /var/log; the A3 switch fault logs on Atlas A3 nodes only;
# the node's time zone for its logs; and the kubelet checks that the paths it must find are directories.
OWN_LOG: Mount = ("log-path", LOG_DIR, "DirectoryOrCreate", False)
ONLY_ON = {"lingqu-log": "910C"}
LOCALTIME: Mount = ("localtime", "/etc/localtime", "", True)
CHECKED = {"/var/lib/kubelet/device-plugins", "/var/lib/kubelet/pod-resources", "/usr/local/Ascend/driver", "/tmp"}


CONTAINERD = "containerd"


def daemonset_name(chip: str, engine: str = CONTAINERD) -> str:
    """`ascend-device-plugin-910b` for chip `910B` (on containerd, or on every engine where the release needs no
    split), `ascend-device-plugin-910b-docker` for its Docker nodes."""
    return f"{APP}-{chip.lower()}" + ("" if engine == CONTAINERD else f"-{engine}")


def plugin_release(values: dict[str, Any]) -> DevicePlugin:
    """The catalog entry of the pinned device plugin release."""
    return release_entry(COMPONENT, values["devicePlugin"]["release"])


def plugin_args(values: dict[str, Any]) -> list[str]:
    """The release's own flags (log file, and `-useAscendDocker` where it has it), Volcano mode, healthz."""
    release = plugin_release(values)
    args = list(release.args)
    if values["devicePlugin"]["volcano"]:
        args += release.volcano_args
    if release.healthz:
        args += release.healthz.flags
    return args


def plugin_env(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The release manifest's variables (NODE_NAME and more) and Ascend Docker mode switched on.

    The plugin reads its mode from the environment at start (at v6.0.0 this overrides `-useAscendDocker`):
    the Ascend runtime sets it only in containers it runs, and with the `ascend` RuntimeClass the plugin's own
    pod runs on runc, so it is set here and NPUs are always handed out for the Ascend runtime to inject.
    """
    release = plugin_release(values)
    return [*(var.manifest() for var in release.env), {"name": release.ascend_docker_env, "value": "True"}]


def plugin_engines(values: dict[str, Any]) -> list[Optional[str]]:
    """The engines that get a DaemonSet of their own per chip: containerd and each engine of the stack the release's
    detector needs a socket for (v26.1.0: Docker's); `[None]`, one DaemonSet for every engine, where it needs none."""
    split = plugin_release(values).engine_detector_mounts
    if not split:
        return [None]
    return [CONTAINERD, *(e for e in values["devicePlugin"]["containerRuntimes"] if e != CONTAINERD and e in split)]


def plugin_mounts(values: dict[str, Any], engine: Optional[str] = None, chip: Optional[str] = None) -> list[Mount]:
    """The host paths the release's manifest mounts (Volcano's too, an A3's switch fault logs on A3 nodes only), the
    engine state its duplicate-NPU detector reads (on the nodes of `engine`), our own log directory and the node's
    time zone."""
    release = plugin_release(values)
    mounts: list[Mount] = []
    volcano = release.volcano_mounts if values["devicePlugin"]["volcano"] else []
    engine_mounts = [m for name, listed in release.engine_detector_mounts.items() if name == engine for m in listed]
    for mount in [*release.mounts, *release.detector_mounts, *engine_mounts, *volcano]:
        if mount.name == OWN_LOG[0]:
            mounts.append(OWN_LOG)
        elif ONLY_ON.get(mount.name, chip) == chip:
            kind = mount.type or ("Directory" if mount.path in CHECKED else "")
            mounts.append((mount.name, mount.path, kind, mount.read_only))
    return mounts + ([] if any(m[0] == LOCALTIME[0] for m in mounts) else [LOCALTIME])


def _container(values: dict[str, Any], engine: Optional[str], chip: Optional[str] = None) -> dict[str, Any]:
    plugin, release = values["devicePlugin"], plugin_release(values)
    container: dict[str, Any] = {
        "name": "device-plugin",
        "image": image_reference(plugin["image"], values["images"]["registry"]),
        "imagePullPolicy": plugin["image"]["pullPolicy"],
        "command": ["device-plugin"],
        "args": plugin_args(values),
        "env": plugin_env(values),
    }
    if release.healthz:  # a release without a health endpoint gets no port and no probe
        container["ports"] = [{"name": "healthz", "containerPort": release.healthz.port, "protocol": "TCP"}]
    container["resources"] = requests_equal_limits(plugin["resources"])
    if release.healthz:
        container["livenessProbe"] = release_liveness("healthz", release.healthz)
    # Privileged: it opens /dev/davinci* and the driver's management devices on the host.
    container["securityContext"] = release.security_context.manifest()
    container["volumeMounts"] = [{"name": name, "mountPath": path, **({"readOnly": True} if ro else {})}
                                 for name, path, _, ro in plugin_mounts(values, engine, chip)]
    return container


def _pod_spec(values: dict[str, Any], chip: str, engine: Optional[str]) -> dict[str, Any]:
    plugin = values["devicePlugin"]
    host_pid = {"hostPID": True} if plugin_release(values).host_pid else {}
    selected = {ACCELERATOR: ACCELERATORS[chip], CHIP: chip, **({CONTAINER_RUNTIME: engine} if engine else {})}
    return {
        "serviceAccountName": DEVICE_PLUGIN_SA,
        "automountServiceAccountToken": True,
        **host_pid,
        "priorityClassName": plugin["priorityClassName"],
        "nodeSelector": node_selector(values, selected),
        "tolerations": tolerations(values),
        "containers": [_container(values, engine, chip)],
        "volumes": [host_path(name, path, kind) for name, path, kind, _ in plugin_mounts(values, engine, chip)],
        **pull_secrets(values["images"]),
    }


def build_device_plugin_daemonsets(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One DaemonSet per chip type in the stack, each on the ready nodes of that chip; where the release's detector
    needs an engine's socket, the chip's Docker nodes get a DaemonSet of their own (labelled with the engine), and
    the chip's first one keeps its name and selects containerd nodes."""
    plugin = values["devicePlugin"]
    result = []
    for chip in plugin["chips"]:
        for engine in plugin_engines(values):
            labels = {CHIP: chip, **({CONTAINER_RUNTIME: engine} if engine and engine != CONTAINERD else {})}
            meta = metadata(values, daemonset_name(chip, engine or CONTAINERD), "device-plugin", APP,
                            image_version(plugin["image"]), values["namespace"], labels=labels)
            result.append(daemonset(meta, APP, _pod_spec(values, chip, engine)))
    return result
