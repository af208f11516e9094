"""A stack runs one MindCluster release: its agents and runtime, with CANN and a driver on that release's tables."""
from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from model.host_step_resources import HOST_COMPONENT, host_versions
from model.kube_objects import labels, mapping, sequence
from model.mindcluster_sets import RULE, WORDS, load_sets
from model.npu_daemonsets import DEVICE_PLUGIN, config_properties, image_patterns, npu_role
from model.preview import judged_at_up
from model.workloads import containers, pod_spec

MIN_REASON = 15
CLUSTER_COMPONENT = "ascend-npu:index:AscendCluster"
SET_COMPONENT = {DEVICE_PLUGIN: "devicePlugin", "exporter": "npuExporter"}
VERSION = "app.kubernetes.io/version"


def _reason(value: Any) -> bool:
    return len(str(value or "").strip()) >= MIN_REASON


def _host_problems(props: Any) -> list[str]:
    versions, override = host_versions(props), mapping(mapping(props).get("compatibilityOverride"))
    chosen = load_sets().get(str(versions.get("mindCluster") or ""))
    if chosen is None:
        return []
    problems = []
    problem = chosen.version_problem(str(versions.get("driver", "")), str(versions.get("cann", "")))
    if problem and not _reason(override.get("reason")):
        problems.append(f"{problem}; use versions on those lines, or name this combination under "
                        "versions.compatibilityOverride with a reason")
    runtime, own = str(versions.get("dockerRuntime", "")), chosen.component("dockerRuntime")
    if runtime.lower() != own.lower() and not (override.get("dockerRuntime") == runtime
                                               and _reason(override.get("reason"))):
        problems.append(f"Ascend Docker Runtime {runtime} is not MindCluster {chosen.release}'s ({own}); {RULE}")
    return problems


def _tag(props: Any, role: str, patterns: dict) -> str:
    """The agent's release: its version label, else the tag of its image (`repo:tag` or `repo:tag@digest`)."""
    label = labels(props).get(VERSION)
    if isinstance(label, str) and label:
        return label
    for _, container in containers(pod_spec("kubernetes:apps/v1:DaemonSet", props) or {}):
        image = str(container.get("image") or "").split("@", 1)[0]
        if any(p in image for p in patterns[role]) and ":" in image.rsplit("/", 1)[-1]:
            return image.rsplit(":", 1)[1]
    return ""


def _exceptions(resources: list) -> set[tuple[str, str]]:
    kept = set()
    for resource in resources:
        if resource.resource_type == CLUSTER_COMPONENT:
            for item in sequence(mapping(resource.props).get("mindClusterExceptions")):
                item = mapping(item)
                if _reason(item.get("reason")):
                    kept.add((str(item.get("component")), str(item.get("tag"))))
    return kept


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    chosen_sets = set()
    for resource in args.resources:
        if resource.resource_type == HOST_COMPONENT:
            for problem in _host_problems(resource.props):
                report_violation(f"node {resource.props.get('node', resource.name)}: {problem}", resource.urn)
            chosen_sets.add(str(host_versions(resource.props).get("mindCluster") or ""))
    chosen_sets.discard("")
    kept, patterns = _exceptions(args.resources), image_patterns(args.get_config(), *SET_COMPONENT)
    owners: dict[str, list] = {}
    for resource in args.resources:
        role = npu_role(resource.resource_type, resource.props, patterns)
        tag = _tag(resource.props, role, patterns) if role else ""
        owner = load_sets().of_component(SET_COMPONENT[role], tag) if role else None
        if owner is not None and (SET_COMPONENT[role], tag) not in kept:
            owners.setdefault(owner.release, []).append((resource, role, tag))
    wanted = next(iter(chosen_sets)) if len(chosen_sets) == 1 else None
    if len(chosen_sets) > 1:
        report_violation(f"the nodes state MindCluster {' and '.join(sorted(chosen_sets))}; one stack runs one "
                         f"release: {RULE}", None)
    if wanted is None and len(owners) < 2:
        return
    running = f"MindCluster {wanted}" if wanted else f"MindCluster {' and '.join(sorted(owners))}"
    for release, found in sorted(owners.items()):
        for resource, role, tag in found if release != wanted else ():
            report_violation(f"{WORDS[SET_COMPONENT[role]]} {tag} is MindCluster {release}'s, while the stack runs "
                             f"{running}; {RULE}. Keep it only with the agent's releaseOverride and a reason",
                             resource.urn)

POLICY = StackValidationPolicy(
    name="mindcluster-release-set",
    description="A stack's device plugin, exporter and Ascend Docker Runtime come from one MindCluster release, with "
                "CANN and the driver on that release's compatibility tables.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties=config_properties(*SET_COMPONENT)),
    remediation_steps="Pick one versions.mindCluster and leave the agents' images and versions.dockerRuntime to it; "
                      "pick CANN and a driver on its tables (policies/mindcluster.yaml), or name the exception under "
                      "versions.compatibilityOverride or the agent's releaseOverride with a reason.",
)
