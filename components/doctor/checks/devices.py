"""The driver's device files on the host, and the device plugin's socket in the kubelet's directory."""
from __future__ import annotations

import re
from typing import Optional

from components.cluster.common.node_labels import RESOURCE_NAMES
from components.config.hosts import NodeSpec
from components.doctor.findings import ERROR, Finding, Kind
from components.doctor.remote import HostReport

DEVICE = re.compile(r"^node /dev/davinci(\d+)$")
DEVICES_MISSING = Kind("devices-missing", ERROR, "the driver's /dev/davinci* devices are missing on the host")
SOCKET_MISSING = Kind("plugin-socket-missing", ERROR, "the device plugin has not registered with the kubelet")
KINDS = (DEVICES_MISSING, SOCKET_MISSING)


def check(node: NodeSpec, report: HostReport, seen: Optional[list[dict]]) -> list[Finding]:
    lines = report.body("devices").splitlines()
    numbered = [m for m in (DEVICE.match(line) for line in lines) if m]
    want = len(seen) if seen else node.npu_count
    found = []
    missing = [name for name in ("davinci_manager", "devmm_svm", "hisi_hdc") if f"node /dev/{name}" not in lines]
    if len(numbered) < want or missing:
        found.append(DEVICES_MISSING(node.name, f"the host has {len(numbered)} /dev/davinciN of {want}"
                                     + (f" and no /dev/{', /dev/'.join(missing)}" if missing else ""),
                                     "the driver's devices are absent, so the runtime has none to give: reboot if "
                                     "the driver asked for it, else `pulumi up` reinstalls the driver"))
    socket = RESOURCE_NAMES[node.chip.value].split("/")[1] + ".sock"
    if f"socket /var/lib/kubelet/device-plugins/{socket}" not in lines:
        found.append(SOCKET_MISSING(node.name, f"/var/lib/kubelet/device-plugins/{socket} is missing: the device "
                                    "plugin has not registered with the kubelet", "read the device plugin Pod's log "
                                    "on this node; check that the kubelet's device-plugins directory is the one the "
                                    "DaemonSet mounts"))
    return found
