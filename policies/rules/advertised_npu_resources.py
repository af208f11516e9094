"""Every `huawei.com/*` resource a workload requests is one the stack's device plugins advertise."""
from __future__ import annotations

from typing import Any, Iterator

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from model.kube_objects import annotations, describe, mapping, sequence
from model.npu_daemonsets import DEVICE_PLUGIN, config_properties, image_patterns, npu_role
from model.preview import judged_at_up
from model.workloads import containers, pod_spec

PREFIX = "huawei.com/"
ANNOTATION = "ascend-npu.io/resource-names"
ACCELERATOR = "accelerator"
ASCEND910 = "huawei.com/Ascend910"
# The node label a plugin selects -> the name it advertises; 910B and Atlas A3 chips are advertised as Ascend910 too.
ACCELERATOR_RESOURCES = {"huawei-Ascend910": ASCEND910, "huawei-Ascend310P": "huawei.com/Ascend310P",
                         "huawei-Ascend310": "huawei.com/Ascend310"}
# A plugin that selects no chip runs on any NPU node and advertises whatever it finds there.
ANY_CHIP = sorted({*ACCELERATOR_RESOURCES.values(), "huawei.com/npu"})


def _selected_accelerators(spec: Any) -> list[str]:
    """`accelerator` values from the nodeSelector and from required node affinity (`In`)."""
    values = [mapping(spec.get("nodeSelector")).get(ACCELERATOR)]
    required = mapping(mapping(mapping(spec.get("affinity")).get("nodeAffinity"))
                       .get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in map(mapping, sequence(required.get("nodeSelectorTerms"))):
        for expression in map(mapping, sequence(term.get("matchExpressions"))):
            if expression.get("key") == ACCELERATOR and expression.get("operator") == "In":
                values += list(sequence(expression.get("values")))
    return [v for v in values if isinstance(v, str)]


def advertised_by(resource_type: str, props: Any) -> list[str]:
    """The names one device plugin DaemonSet advertises: its annotation, else what its selector implies."""
    template = mapping(mapping(mapping(props).get("spec")).get("template"))
    for notes in (annotations(props), annotations(template)):
        if ANNOTATION in notes:
            return [n.strip() for n in str(notes[ANNOTATION]).split(",") if n.strip()]
    accelerators = _selected_accelerators(pod_spec(resource_type, props) or {})
    if not accelerators:
        return ANY_CHIP
    return [ACCELERATOR_RESOURCES[a] for a in accelerators if a in ACCELERATOR_RESOURCES]


def requested(spec: Any) -> Iterator[tuple[str, Any, str]]:
    """(container path, container name, resource name) of every `huawei.com/*` request or limit, once each."""
    for where, container in containers(spec):
        resources = mapping(container.get("resources"))
        names = {key for kind in ("requests", "limits") for key in mapping(resources.get(kind))}
        for name in sorted(n for n in names if isinstance(n, str) and n.startswith(PREFIX)):
            yield where, container.get("name", "?"), name


def _is_advertised(name: str, advertised: set[str]) -> bool:
    # Virtual NPUs (vNPU) are advertised as slices of a chip's name: `huawei.com/Ascend310P-2c`.
    return name in advertised or any(name.startswith(a + "-") for a in advertised)


def _hint(name: str, advertised: set[str]) -> str:
    if name.startswith(ASCEND910) and ASCEND910 in advertised:
        return f" (the device plugin advertises 910B and Atlas A3 chips as {ASCEND910})"
    return ""


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    patterns = image_patterns(config, DEVICE_PLUGIN)
    configured = {str(n) for n in config.get("advertisedResources", [])}
    plugins = [r for r in args.resources if npu_role(r.resource_type, r.props, patterns) == DEVICE_PLUGIN]
    if not plugins and not configured:
        return  # nothing in the stack or the config says what the cluster advertises
    advertised = set(configured)
    for plugin in plugins:
        advertised.update(advertised_by(plugin.resource_type, plugin.props))
    listed = ", ".join(sorted(advertised)) or "nothing"
    for resource in args.resources:
        spec = pod_spec(resource.resource_type, resource.props)
        for where, container, name in requested(spec) if spec is not None else ():
            if not _is_advertised(name, advertised):
                what = describe(resource.resource_type, resource.props, resource.name)
                report_violation(f"{what} {where} ({container}) requests {name}, which no device plugin advertises "
                                 f"(advertised: {listed}){_hint(name, advertised)}; request an advertised name, or "
                                 "list it in `advertisedResources` when a plugin outside this stack advertises it",
                                 resource.urn)


POLICY = StackValidationPolicy(
    name="advertised-npu-resources",
    description="Workloads request only the `huawei.com/*` NPU resource names that the stack's device plugins "
                "(or `advertisedResources`) advertise.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        **config_properties(DEVICE_PLUGIN),
        "advertisedResources": {"type": "array", "items": {"type": "string"}, "default": [],
                                "description": "Names advertised by device plugins deployed outside this stack."},
    }),
    remediation_steps="Request the name the device plugin advertises (`huawei.com/Ascend910` for 910 and 910B "
                      "chips, `huawei.com/Ascend310P`, `huawei.com/Ascend310`); set the plugin's "
                      "`ascend-npu.io/resource-names` annotation when it advertises others, or list names from "
                      "plugins outside the stack in `advertisedResources`.",
)
