"""The stacks the cluster tests build from (the real dev and prod configs and variants), and lookups."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import yaml

from components.config import StackSpec, parse_stack

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ascend-npu:"
# Stands in for the decrypted `sshPrivateKey` secret of stacks that do not use the SSH agent.
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nstand-in\n-----END OPENSSH PRIVATE KEY-----\n"


def stack_raw(stack: str) -> dict[str, Any]:
    """The raw config of `Pulumi.<stack>.yaml` (keys without the project prefix), secrets left out."""
    config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {key[len(PREFIX):]: value for key, value in config.items()
            if not (isinstance(value, dict) and set(value) == {"secure"})}


def spec_of(raw: dict[str, Any]) -> StackSpec:
    """Parse raw config as the program does; a key-based stack gets the stand-in key."""
    uses_agent = (raw.get("ssh") or {}).get("useAgent", False)
    return parse_stack(raw, None if uses_agent else PRIVATE_KEY)


def _set(stack: str, **sections: Any) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        raw = copy.deepcopy(stack_raw(stack))
        for key, value in sections.items():
            raw[key] = {**(raw.get(key) or {}), **value}
        return raw
    return build


MINDCLUSTER = "swr.cn-south-1.myhuaweicloud.com/ascendhub"
AHEAD = {"tag": "v26.1.0", "release": "v26.1.0", "reason": "one agent of MindCluster 26.1.0 tried ahead, OPS-5120"}
BEHIND = {"tag": "v6.0.0", "release": "v6.0.0", "reason": "agents kept on MindCluster 6.0.0 until OPS-5121 lands"}


def _with_a3() -> dict[str, Any]:
    """prod with an Atlas 800T A3 pool (910C, 8 NPUs of 2 chips: 16) and its node, packages and validation image."""
    raw = copy.deepcopy(stack_raw("prod"))
    raw["pools"]["a3"] = {"chip": "910C", "arch": "aarch64", "npuCount": 16, "containerRuntime": "containerd"}
    raw["nodes"].append({"name": "a3-01.prod.corp.example", "address": "10.40.3.11", "pool": "a3",
                         "hostKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFj"})
    raw["packages"]["files"] += [
        {"kind": "driver", "chip": "910C", "arch": "aarch64", "sha256": "a3" * 32,
         "file": "Atlas-A3-hdk-npu-driver_25.5.0_linux-aarch64.run"},
        {"kind": "firmware", "chip": "910C", "sha256": "a4" * 32, "file": "Atlas-A3-hdk-npu-firmware_7.8.0.5.216.run"},
        {"kind": "kernels", "chip": "910C", "arch": "aarch64", "sha256": "a5" * 32,
         "file": "Ascend-cann-A3-ops_9.1.0_linux-aarch64.run"}]
    raw["validation"]["images"]["910C"] = {"repository": "quay.io/ascend/cann", "tag": "9.1.0-a3-ubuntu22.04-py3.12",
                                           "digest": "sha256:" + "a6" * 32}
    return raw


def _v6(**sections: Any) -> Callable[[], dict[str, Any]]:
    """prod with both agents kept at v6.0.0 by their releaseOverride (the v6.0.0 manifests' reference), and SECTIONS."""
    agents = {"devicePlugin": {"image": {"repository": f"{MINDCLUSTER}/ascend-k8sdeviceplugin", "tag": "v6.0.0"},
                               "releaseOverride": BEHIND},
              "exporter": {"image": {"repository": f"{MINDCLUSTER}/npu-exporter", "tag": "v6.0.0"},
                           "releaseOverride": BEHIND}}
    return _set("prod", **{key: {**agents.get(key, {}), **sections.get(key, {})} for key in {*agents, *sections}})
VARIANTS: dict[str, Callable[[], dict[str, Any]]] = {
    "dev": lambda: stack_raw("dev"),
    "prod": lambda: stack_raw("prod"),
    "prod-v6": _v6(),
    "prod-a3": _with_a3,
    "prod-exporter-off": _v6(exporter={"enabled": False}),
    "prod-operator-off": _set("prod", monitoring={"prometheusOperator": False, "grafanaDashboard": False,
                                                     "extraLabels": {}}),
    "dev-operator-on": _set("dev", monitoring={"prometheusOperator": True}),
    "dev-dashboard-sa": _set("dev", dashboardAccess={"enabled": True, "serviceAccount": "kubernetes-dashboard"}),
    "dev-ascend-default": _set("dev", cluster={"ascendDefaultRuntime": True}),
    # A digest pins what is pulled; the tag beside it names the release whose flags the binary defines.
    "prod-volcano-digest": _v6(validation={"enabled": False}, devicePlugin={
        "volcano": True, "image": {"repository": f"{MINDCLUSTER}/ascend-k8sdeviceplugin", "tag": "v6.0.0",
                                   "digest": "sha256:" + "4e" * 32}}),
    # The dev stack with only the device plugin's image tag moved to the next catalogued release (another MindCluster
    # release than the stack's: kept by its releaseOverride, as a site trying one agent ahead would).
    "dev-plugin-v26": _set("dev", devicePlugin={"image": {"repository": f"{MINDCLUSTER}/ascend-k8sdeviceplugin",
                                                          "tag": "v26.1.0"}, "releaseOverride": AHEAD}),
    # prod (910B on containerd, 310P on Docker) with the device plugin at v26.1.0 (its set's, pinned by another
    # digest): its detector needs Docker's socket.
    "prod-plugin-v26": _set("prod", devicePlugin={"image": {"repository": f"{MINDCLUSTER}/ascend-k8sdeviceplugin",
                                                           "tag": "v26.1.0", "digest": "sha256:" + "5a" * 32}}),
    "dev-exporter-v26": _set("dev", exporter={"image": {"repository": f"{MINDCLUSTER}/npu-exporter",
                                                        "tag": "v26.1.0"}, "releaseOverride": AHEAD}),
    # An air-gapped site: every image from its registry (the exporter's from one of its own), an existing pull Secret.
    "prod-site-registry": _set("prod", images={"registry": "registry.site.example:5000", "pullSecret": "site-pull"},
                               exporter={"image": {"repository": f"{MINDCLUSTER}/npu-exporter", "tag": "v26.1.0",
                                                   "registry": "exporter.mirror.example"}}),
    # A rebuilt image under the organisation's own tag, rendered as the release it was built from.
    "dev-plugin-override": _set("dev", devicePlugin={
        "image": {"repository": "registry.example.com/ascend/ascend-k8sdeviceplugin", "tag": "v6.0.0-corp.2"},
        "releaseOverride": {"tag": "v6.0.0-corp.2", "release": "v6.0.0",
                            "reason": "v6.0.0 rebuilt on the corporate base image, ticket OPS-4411"}}),
}


def of_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The objects of one kind, in order."""
    return [o for o in objs if o["kind"] == kind]


def one(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The single object of a kind (and name)."""
    found = [o for o in of_kind(objs, kind) if name is None or o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {[o['metadata']['name'] for o in found]}"
    return found[0]


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod spec of a DaemonSet or Job."""
    return obj["spec"]["template"]["spec"]
