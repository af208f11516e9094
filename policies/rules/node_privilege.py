"""Node-level privilege (privileged, host namespaces and ports, hostPath, capabilities, /proc) for node agents only."""
from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import describe, mapping, metadata, sequence
from model.node_agents import DEFAULT_NAMESPACES, HOST_NAMESPACES, Agent, builtin_agents, capability, site_agents
from model.npu_daemonsets import DEVICE_PLUGIN, EXPORTER, config_properties
from model.preview import judged_at_up
from model.workloads import containers, pod_labels, pod_spec

# Pod Security Standards, baseline: the capabilities a container runtime grants by default. Adding one of
# them back gives a container nothing its node does not hand every container already.
BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
AGENT_PROPERTIES = {
    "name": {"type": "string", "description": "Shown in messages."},
    "namespace": {"type": "string"},
    "labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"},
               "description": "Labels every pod of the agent carries; all must match."},
    "images": {"type": "array", "items": {"type": "string"},
               "description": "Substrings of the images its privileged containers run; empty: any image."},
    "privileged": {"type": "boolean", "default": False},
    **{field: {"type": "boolean", "default": False} for field in HOST_NAMESPACES},
    "capabilities": {"type": "array", "items": {"type": "string"}},
    "hostPorts": {"type": "array", "items": {"type": "integer"}},
    "hostPaths": {"type": "array", "items": {"type": "string"},
                  "description": "Host paths it may mount (a path beneath one counts)."},
}


def _container_privileges(container: Any) -> list[tuple[str, Any]]:
    """(kind, value) of each node-level privilege a container asks for: privileged, capability, procMount, hostPort."""
    context = mapping(container.get("securityContext"))
    found: list[tuple[str, Any]] = [("privileged", None)] if context.get("privileged") is True else []
    added = (capability(c) for c in sequence(mapping(context.get("capabilities")).get("add")))
    found += [("capability", c) for c in added if c not in BASELINE_CAPABILITIES]
    if context.get("procMount") == "Unmasked":
        found.append(("procMount", "Unmasked"))
    ports = (mapping(p).get("hostPort") for p in sequence(container.get("ports")))
    found += [("hostPort", int(port) if isinstance(port, float) else port) for port in ports if port not in (None, 0)]
    return found


def _container_allowed(agent: Agent, container: Any, privilege: tuple[str, Any]) -> bool:
    kind, value = privilege
    if not agent.runs(container.get("image")):
        return False
    return {"privileged": agent.privileged, "capability": value in agent.capabilities,
            "hostPort": value in agent.host_ports}.get(kind, False)


def _problems(spec: Any, agents: list[Agent]) -> list[str]:
    problems = [f"sets `{field}: true`" for field in HOST_NAMESPACES
                if spec.get(field) is True and not any(field in a.host_namespaces for a in agents)]
    for volume in map(mapping, sequence(spec.get("volumes"))):
        path = mapping(volume.get("hostPath")).get("path")
        if isinstance(path, str) and not any(a.allows_path(path) for a in agents):
            problems.append(f"mounts host path {path} (volume '{volume.get('name', '?')}')")
    for where, container in containers(spec):
        for privilege in _container_privileges(container):
            if not any(_container_allowed(a, container, privilege) for a in agents):
                kind, value = privilege
                problems.append(f"{where} ({container.get('name', '?')}) runs with {kind}"
                                + (f" {value}" if value is not None else ""))
    return problems


def _hint(agents: list[Agent], namespaces: list[str]) -> str:
    if not agents:
        return ("only node agents may: remove it; ascend-npu's device plugin and exporter qualify in "
                f"`agentNamespaces` ({', '.join(namespaces)}) with the labels the program sets, any other node "
                "agent once described in `allowedAgents` (namespace, pod labels, images and what it needs)")
    return f"{'; '.join(a.allowances() for a in agents)}: remove it, or describe what it needs in `allowedAgents`"


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    spec = pod_spec(args.resource_type, args.props)
    if spec is None:
        return
    config = args.get_config()
    if not _problems(spec, []):
        return
    namespace, labels = metadata(args.props).get("namespace"), pod_labels(args.resource_type, args.props)
    agents = [a for a in builtin_agents(config) + site_agents(config) if a.recognises(namespace, labels)]
    what = describe(args.resource_type, args.props, args.name)
    hint = _hint(agents, [str(n) for n in config.get("agentNamespaces", DEFAULT_NAMESPACES)])
    for problem in _problems(spec, agents):
        report_violation(f"{what} {problem}; {hint}", None)


POLICY = ResourceValidationPolicy(
    name="node-privilege",
    description="Only node agents hold node-level privilege: privileged containers, hostNetwork, hostPID, hostIPC, "
                "host ports, hostPath volumes, capabilities beyond the runtime's defaults, an unmasked /proc. "
                "ascend-npu's device plugin and exporter may hold what npu-agents.yaml lists; other agents are "
                "configured.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "agentNamespaces": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_NAMESPACES,
                            "description": "Namespaces of ascend-npu's device plugin and exporter "
                                           "(`cluster.namespace` of the stacks)."},
        **config_properties(DEVICE_PLUGIN, EXPORTER),
        "allowedAgents": {"type": "array", "default": [],
                          "items": {"type": "object", "required": ["namespace", "labels"],
                                    "additionalProperties": False, "properties": AGENT_PROPERTIES},
                          "description": "Other node agents of the site and the node-level privilege each needs."},
    }),
    remediation_steps="Remove `privileged`, `hostNetwork`, `hostPID`, `hostIPC`, `hostPort`, hostPath volumes, "
                      "added capabilities and `procMount: Unmasked` from workloads that are not node agents. Run "
                      "ascend-npu's agents in `agentNamespaces` with the labels the program sets; describe any "
                      "other node agent (e.g. a node exporter or CNI) in `allowedAgents`.",
)
