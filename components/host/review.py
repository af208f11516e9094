"""What a reviewer reads of a node in `pulumi preview --diff`: its wave, packages with their sums, where they come
from, its NPU addresses and what its drain does, as the AscendHost component's inputs, one short line each.

The engine shows a component's inputs key by key and diffs them like any resource's (pulumi v3.274.0
pkg/resource/deploy/step_generator.go L3070-3076); the CLI cuts a string at 150 characters and 3 lines unless
`--show-full-output` (pkg/backend/display/object_diff.go L1494-1524), which the steps' one-line calls run into.
"""
from __future__ import annotations

from typing import Any

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.packages import Source
from components.host.commands import node_packages
from components.host.drain_steps import drain_reason


def packages_from(spec: StackSpec) -> str:
    """Where the node's installers come from."""
    packages = spec.packages
    if packages.source is Source.MIRROR:
        return f"mirror {packages.mirror_url}" + (" (with mirrorCredentials)" if spec.mirror_credentials else "")
    return f"upload from {packages.directory}"


def drain_facts(spec: StackSpec, node: NodeSpec) -> dict[str, str]:
    """When the node's drain cordons and evicts, in the drain step's own terms (components/drain/__main__.py)."""
    drain = spec.rollout.drain
    if not drain.enabled:
        return {"off": "rollout.drain.enabled is false: the host steps run beside the node's NPU Pods"}
    return {"whenChanged": drain_reason(spec, node),
            "evicts": "Pods that request huawei.com/Ascend*" + (f", and '{drain.pod_selector}'" if drain.pod_selector
                                                                 else ""),
            "onFirstInstall": "only when such Pods already run there",
            "notInTheCluster": "none"}


def review_facts(spec: StackSpec, node: NodeSpec, wave: int) -> dict[str, Any]:
    """The node's rollout as a reviewer checks it, each value short enough to be shown whole."""
    facts: dict[str, Any] = {
        "wave": f"{wave} (canary)" if node.name in spec.canaries else str(wave),
        "packages": [{"kind": p.kind.value, "file": p.file, "sha256": p.sha256} for p in node_packages(spec, node)],
        "packagesFrom": packages_from(spec),
        "drain": drain_facts(spec, node),
    }
    if node.npu_network:
        facts["npuNetwork"] = [{"npu": p.npu, "address": p.address, "netmask": p.netmask, "gateway": p.gateway,
                                "detect": p.detect} for p in node.npu_network]
    return facts
