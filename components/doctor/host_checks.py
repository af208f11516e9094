"""What the probe read on a node, checked against the stack: NPUs, versions, the engine's runtime, devices, socket."""
from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from pathlib import Path
from typing import Optional

from components.cluster.common.node_labels import RESOURCE_NAMES
from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec
from components.doctor.findings import Finding
from components.doctor.remote import HostReport
from components.host.commands import runtime_record_version

HANDLER = "ascend"  # the RuntimeClass handler the cluster layer names (values_contract runtimeClass.handler)
RUNTIME_BINARY = "ascend-docker-runtime"
DEVICE = re.compile(r"^node /dev/davinci(\d+)$")
_SPEC = importlib.util.spec_from_file_location(
    "doctor_npu_smi", Path(__file__).parents[1] / "host" / "scripts" / "npu_smi.py")
npu_smi = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(npu_smi)


def file_value(text: str, key: str) -> str:
    """KEY's value in a KEY=VALUE file, the key compared without case (as lib.sh file_value)."""
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip().lower() == key.lower():
            return value.strip().strip('"')
    return ""


def matches(wanted: str, found: str) -> bool:
    """lib.sh version_matches: the same ignoring case, or the wanted one with a numeric patch added."""
    wanted, found = wanted.lower(), found.lower()
    return bool(found) and (found == wanted or (found.startswith(wanted + ".") and found[len(wanted) + 1:].isdigit()))


def installed(report: HostReport) -> dict[str, str]:
    """The version each kind's file records (kernels: version_dir, the CANN release)."""
    found = {}
    for kind in ("driver", "firmware", "toolkit", "kernels", "dockerRuntime"):
        text = report.body(f"file:{kind}")
        found[kind] = (file_value(text, "version_dir") if kind == "kernels" else "") or file_value(text, "version")
    return found


def chips(report: HostReport) -> Optional[list[dict]]:
    """The chips `npu-smi info` listed, or None when it failed."""
    return npu_smi.chips(report.body("npu-smi")) if report.header("npu-smi") == "0" else None


def check_npus(node: NodeSpec, report: HostReport, seen: Optional[list[dict]]) -> list[Finding]:
    if seen is None:
        first = (report.body("npu-smi").splitlines() or ["no output"])[0]
        return [Finding("7.1", node.name, "npu-smi", f"npu-smi info fails (exit {report.header('npu-smi')}): {first}",
                        "the driver is not loaded or is broken: `pulumi up` reinstalls it; reboot if its installer "
                        "asked for one; see /var/log/ascend-npu/driver.log")]
    found = [Finding("7.1", node.name, "npu-smi", f"NPU {c['npu']} chip {c['chip']} ({c['busId']}) is {c['health']}",
                     "a chip that is not OK is withheld by the device plugin: `npu-smi info -t health -i "
                     f"{c['npu']}` for its alarm, then the hardware runbook") for c in seen if c["health"] != "OK"]
    if len(seen) != node.npu_count:
        found.append(Finding("7.1", node.name, "npu-smi", f"npu-smi shows {len(seen)} chip(s), the stack says "
                             f"npuCount {node.npu_count}", "check `lspci | grep -i huawei` and the card seating, or "
                             "correct npuCount"))
    return found


def check_versions(spec: StackSpec, node: NodeSpec, report: HostReport, ready: bool) -> list[Finding]:
    v = spec.versions
    wanted = {"driver": v.driver, "firmware": v.firmware, "toolkit": v.cann, "kernels": v.cann,
              "dockerRuntime": runtime_record_version(v.docker_runtime)}
    found, problems = installed(report), []
    for kind, want in wanted.items():
        ok = found[kind] == want if kind == "dockerRuntime" else matches(want, found[kind])
        if not ok:
            problems.append(f"{kind} is {found[kind] or 'not installed'}, the stack wants {want}")
    if not problems:
        return []
    where = "; yet it is labelled ascend-npu.io/ready=true, so NPU work lands on it" if ready else ""
    return [Finding("7.4", node.name, "versions", "; ".join(problems) + where,
                    "`pulumi up` installs the stack's versions (the node is drained first); if the node was "
                    "changed on purpose, pin those versions in the stack instead")]


def _runtimes(config: dict) -> tuple[dict, Optional[str]]:
    """Every `...containerd.runtimes` table of a containerd config (1.x and 2.x layouts) and its default."""
    runtimes, default = {}, None
    for plugin in (config.get("plugins") or {}).values():
        inner = (plugin or {}).get("containerd") or {}
        runtimes.update(inner.get("runtimes") or {})
        default = inner.get("default_runtime_name") or default
    return runtimes, default


def check_engine(spec: StackSpec, node: NodeSpec, report: HostReport) -> list[Finding]:
    must_default = spec.cluster.ascend_default_runtime
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
    fix = "`pulumi up` merges the ascend runtime back into the engine's config and restarts the engine"
    if not has:
        return [Finding("7.3", node.name, "engine", f"{where} has no `{HANDLER}` runtime running {RUNTIME_BINARY}: "
                        "Pods of the RuntimeClass get no NPU devices", fix)]
    if must_default and default != HANDLER:
        return [Finding("7.3", node.name, "engine", f"{where}: the default runtime is {default or 'runc'}, not "
                        f"{HANDLER} (cluster.ascendDefaultRuntime)", fix)]
    return []


def check_devices(node: NodeSpec, report: HostReport, seen: Optional[list[dict]]) -> list[Finding]:
    lines = report.body("devices").splitlines()
    numbered = [m for m in (DEVICE.match(line) for line in lines) if m]
    want = len(seen) if seen else node.npu_count
    found = []
    missing = [name for name in ("davinci_manager", "devmm_svm", "hisi_hdc") if f"node /dev/{name}" not in lines]
    if len(numbered) < want or missing:
        found.append(Finding("7.3", node.name, "devices", f"the host has {len(numbered)} /dev/davinciN of {want}"
                             + (f" and no /dev/{', /dev/'.join(missing)}" if missing else ""),
                             "the driver's devices are absent, so the runtime has none to give: reboot if the "
                             "driver asked for it, else `pulumi up` reinstalls the driver"))
    socket = RESOURCE_NAMES[node.chip.value].split("/")[1] + ".sock"
    if f"socket /var/lib/kubelet/device-plugins/{socket}" not in lines:
        found.append(Finding("7.1", node.name, "plugin-socket", f"/var/lib/kubelet/device-plugins/{socket} is "
                             "missing: the device plugin has not registered with the kubelet",
                             "read the device plugin Pod's log on this node; check that the kubelet's "
                             "device-plugins directory is the one the DaemonSet mounts"))
    return found


def host_findings(spec: StackSpec, node: NodeSpec, report: HostReport, ready: bool) -> list[Finding]:
    """Every host finding of NODE; an unreachable node is one finding."""
    if report.error:
        return [Finding("unchecked", node.name, "ssh", report.error,
                        "check that the node is up and answers as the stack says (address, ssh.port, hostKey)")]
    seen = chips(report)
    return (check_npus(node, report, seen) + check_versions(spec, node, report, ready)
            + check_engine(spec, node, report) + check_devices(node, report, seen))
