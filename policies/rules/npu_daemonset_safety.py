"""NPU DaemonSets (device plugin, exporter) carry a priority class, an NPU toleration and cpu/memory resources."""
from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import describe, mapping, sequence
from model.npu_daemonsets import DEVICE_PLUGIN, EXPORTER, config_properties, image_patterns, npu_role
from model.preview import judged_at_up
from model.workloads import containers, pod_spec

# The taints NPU nodes carry, whoever set them (MindCluster, this project, an operator by hand).
NPU_TAINT_KEYS = ["huawei.com/Ascend910", "huawei.com/Ascend310", "huawei.com/Ascend310P", "huawei.com/npu"]
AMOUNTS = [(kind, resource) for kind in ("requests", "limits") for resource in ("cpu", "memory")]


def _tolerates_npu(toleration: Any, taint_keys: list[str]) -> bool:
    toleration = mapping(toleration)
    key = toleration.get("key")
    # An `Exists` toleration without a key tolerates every taint, NPU ones included.
    return key in taint_keys or (not key and toleration.get("operator") == "Exists")


def _missing_amounts(container: Any) -> list[str]:
    resources = mapping(container.get("resources"))
    return [f"{kind}.{resource}" for kind, resource in AMOUNTS
            if mapping(resources.get(kind)).get(resource) in (None, "", 0)]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    role = npu_role(args.resource_type, args.props, image_patterns(config, DEVICE_PLUGIN, EXPORTER))
    if role is None:
        return
    spec = pod_spec(args.resource_type, args.props) or {}
    what = f"NPU {role} {describe(args.resource_type, args.props, args.name)}"
    if not spec.get("priorityClassName"):
        report_violation(f"{what} has no priorityClassName; set `priorityClassName: system-node-critical` (or the "
                         "site's own node-critical class) so it is not preempted or evicted before NPU workloads", None)
    taint_keys = [str(k) for k in config.get("npuTaintKeys", NPU_TAINT_KEYS)]
    if not any(_tolerates_npu(t, taint_keys) for t in sequence(spec.get("tolerations"))):
        report_violation(f"{what} tolerates no NPU taint, so it never runs on tainted NPU nodes; add "
                         f"`{{key: <taint>, operator: Exists, effect: NoSchedule}}` for each of "
                         f"{', '.join(taint_keys)}", None)
    for where, container in containers(spec):
        if where.startswith("ephemeralContainers"):
            continue  # the API gives ephemeral containers no resources
        missing = _missing_amounts(container)
        if missing:
            report_violation(f"{what} {where} ({container.get('name', '?')}) sets no {', '.join(missing)}; set cpu "
                             "and memory requests and limits (MindCluster uses 500m / 500Mi for both) so the "
                             "DaemonSet gets Guaranteed QoS", None)


POLICY = ResourceValidationPolicy(
    name="npu-daemonset-safety",
    description="The NPU device plugin and exporter DaemonSets carry a priorityClassName, a toleration for the NPU "
                "taints and cpu/memory requests and limits on every container.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        **config_properties(DEVICE_PLUGIN, EXPORTER),
        "npuTaintKeys": {"type": "array", "items": {"type": "string"}, "default": NPU_TAINT_KEYS,
                         "description": "Taint keys of NPU nodes; one toleration for any of them is required."},
    }),
    remediation_steps="Give the device plugin and exporter DaemonSets `priorityClassName: system-node-critical`, "
                      "`tolerations` for the NPU taints (`huawei.com/Ascend910`, ... with `operator: Exists`) and "
                      "`resources.requests` and `resources.limits` for cpu and memory on every container.",
)
