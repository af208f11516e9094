"""The whole stack spec: the config keys, their models, and the parse that runs every check."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Collection

from pydantic import TypeAdapter, ValidationError

from components.config.checks import check_mirror_credentials, run_checks
from components.config.cluster import Cluster, DevicePlugin, Exporter, Monitoring, Rollout, Validation
from components.config.dashboard import DashboardAccess
from components.config.frameworks import Framework
from components.config.hosts import Node, NodeSpec, Pool, Ssh
from components.config.images import Image
from components.config.node_checks import resolve_nodes
from components.config.packages import Packages
from components.config.problems import NAMESPACE, Problem, SpecError, field_path, from_validation_error, \
    with_node_names
from components.config.redact import preview_key
from components.config.validation_images import canaries_per_chip, job_image, job_nodes
from components.config.versions import Versions


@dataclass(frozen=True)
class ConfigKey:
    """One top-level config key: the type it parses into and whether stacks must set it."""

    name: str
    annotation: Any
    description: str
    required: bool = False
    secret: bool = False


CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("cluster", Cluster, "The cluster: name, namespace, default container runtime.", required=True),
    ConfigKey("ssh", Ssh, "How to reach the nodes: user, port, agent, bastion."),
    ConfigKey("sshPrivateKey", str, "Private key for SSH; set it with `pulumi config set --secret "
              "sshPrivateKey < key` (never in plain text). Not needed with `ssh.useAgent`.", secret=True),
    ConfigKey("mirrorCredentials", str, "Login for the package mirror as `user:password`; set it with `pulumi config "
              "set --secret mirrorCredentials` (never in plain text, never in the URL). It reaches the node on the "
              "install command's stdin, never on a command line.", secret=True),
    ConfigKey("pools", dict[str, Pool], "Named defaults (chip, arch, npuCount, containerRuntime) for nodes."),
    ConfigKey("nodes", list[Node], "The NPU servers; `name` is the Kubernetes node name.", required=True),
    ConfigKey("versions", Versions, "Exact firmware, driver, CANN and Ascend Docker Runtime versions.",
              required=True),
    ConfigKey("frameworks", list[Framework], "The AI frameworks the workloads use (torch_npu, MindSpore), checked "
              "against `versions.cann` and Python by each framework's own compatibility table."),
    ConfigKey("packages", Packages, "The `.run` installers: source, files and SHA-256 sums.", required=True),
    ConfigKey("rollout", Rollout, "Canary nodes, nodes per wave, reboot, downgrade, disruption and destroy behaviour."),
    ConfigKey("devicePlugin", DevicePlugin, "Ascend device plugin: image, Volcano mode, resources."),
    ConfigKey("exporter", Exporter, "NPU exporter: on/off, image, port, resources."),
    ConfigKey("monitoring", Monitoring, "Prometheus Operator objects, Prometheus pods, alert thresholds."),
    ConfigKey("validation", Validation, "End-to-end validation job on a canary node."),
    ConfigKey("dashboardAccess", DashboardAccess, "Optional read-only Kubernetes Dashboard access."),
)
KEYS_BY_NAME = {k.name: k for k in CONFIG_KEYS}


@dataclass(frozen=True)
class StackSpec:
    """The validated stack: every section, the resolved nodes and the SSH secret (an Output or None)."""

    cluster: Cluster
    ssh: Ssh
    pools: dict[str, Pool]
    nodes: tuple[NodeSpec, ...]
    versions: Versions
    packages: Packages
    rollout: Rollout
    device_plugin: DevicePlugin
    exporter: Exporter
    monitoring: Monitoring
    validation: Validation
    dashboard_access: DashboardAccess
    frameworks: tuple[Framework, ...] = ()
    ssh_private_key: Any = field(default=None, repr=False)
    mirror_credentials: Any = field(default=None, repr=False)

    @property
    def canaries(self) -> tuple[str, ...]:
        """The listed canaries, and the first node of each chip type none of them has."""
        return canaries_per_chip(self.nodes, self.rollout.canaries)

    @property
    def validation_jobs(self) -> dict[str, tuple[str, Image]]:
        """Chip type -> (canary, image) of its validation Job; empty when validation is off."""
        if not self.validation.enabled:
            return {}
        return {chip: (node, job_image(self.validation.images, self.versions.cann, chip))
                for chip, node in job_nodes(self.nodes, self.canaries).items()}

    def node(self, name: str) -> NodeSpec:
        return next(n for n in self.nodes if n.name == name)


def _validate(key: ConfigKey, raw_value: Any, secret: bool = False) -> tuple[Any, list[Problem]]:
    """One section; a list or mapping of models item by item, so one broken item leaves the others checked
    (a broken item is kept as None: checks that depend on it stay quiet)."""
    origin, args = typing.get_origin(key.annotation), typing.get_args(key.annotation)
    if origin is list and isinstance(raw_value, list):
        if not raw_value and key.required:
            return None, [Problem(key.name, f"an empty list; write at least one entry. {key.description}")]
        items, problems = [], []
        for i, item in enumerate(raw_value):
            value, found = _validate_one(f"{key.name}[{i}]", args[0], item, secret)
            items.append(value)
            problems += found
        return items, problems
    if origin is dict and isinstance(raw_value, dict):
        entries, problems = {}, []
        for name, item in raw_value.items():
            value, found = _validate_one(field_path(key.name, (name,)), args[1], item, secret)
            entries[name] = value
            problems += found
        return entries, problems
    return _validate_one(key.name, key.annotation, raw_value, secret)


def _validate_one(where: str, annotation: Any, raw_value: Any, secret: bool) -> tuple[Any, list[Problem]]:
    try:
        return TypeAdapter(annotation).validate_python(raw_value), []
    except ValidationError as exc:
        return None, from_validation_error(where, annotation, exc, secret)


def parse_sections(raw: dict[str, Any], secret_sections: Collection[str] = ()) -> tuple[dict[str, Any], list[Problem]]:
    """Validate each key on its own, so one broken section does not hide the problems of another; a section that
    holds a secret shows no value in its problems."""
    parsed: dict[str, Any] = {}
    problems: list[Problem] = []
    for key in CONFIG_KEYS:
        if key.secret:
            continue
        if key.name not in raw or raw[key.name] is None:
            if key.required:
                problems.append(Problem(key.name, f"required and missing; {key.description}"))
                continue
            raw_value: Any = [] if typing.get_origin(key.annotation) is list else {}
        else:
            raw_value = raw[key.name]
        value, found = _validate(key, raw_value, key.name in secret_sections)
        if found or value is None:
            problems += found
            if isinstance(value, (list, dict)) and value:
                parsed[key.name] = value  # the good items, for the checks that can still run
            continue
        parsed[key.name] = value
    for name in sorted(set(raw) - set(KEYS_BY_NAME)):
        hint = f"; nest it under {NAMESPACE}:{name.split('.')[0]}" if name.split(".")[0] in KEYS_BY_NAME else ""
        problems.append(Problem(preview_key(name), f"unknown config key; the keys are: {', '.join(KEYS_BY_NAME)}"
                                                   f"{hint}"))
    return parsed, problems


def parse_stack(raw: dict[str, Any], private_key: Any = None, private_key_is_secret: bool = True,
                mirror_credentials: Any = None, mirror_credentials_is_secret: bool = True,
                secret_sections: Collection[str] = ()) -> StackSpec:
    """Raw config values (key without namespace -> value) to a StackSpec, or SpecError with every problem."""
    parsed, problems = parse_sections(raw, secret_sections)
    problems += run_checks(parsed, private_key is not None, private_key_is_secret)
    problems += check_mirror_credentials(parsed.get("packages"), mirror_credentials is not None,
                                         mirror_credentials_is_secret)
    if problems:
        raise SpecError(with_node_names(problems, raw.get("nodes")))
    return StackSpec(
        cluster=parsed["cluster"], ssh=parsed["ssh"], pools=parsed["pools"],
        nodes=tuple(resolve_nodes(parsed)[0]), versions=parsed["versions"], packages=parsed["packages"],
        rollout=parsed["rollout"], device_plugin=parsed["devicePlugin"], exporter=parsed["exporter"],
        monitoring=parsed["monitoring"], validation=parsed["validation"],
        dashboard_access=parsed["dashboardAccess"], frameworks=tuple(parsed["frameworks"]),
        ssh_private_key=private_key,
        mirror_credentials=mirror_credentials)
