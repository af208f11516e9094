"""The whole stack spec: the config keys, their models, and the parse that runs every check."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Collection, Optional

from pydantic import TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from components.config.checks import check_mirror_credentials, run_checks
from components.config.cluster import Cluster, DevicePlugin, Exporter, Monitoring, Rollout, Validation
from components.config.dashboard import DashboardAccess
from components.config.frameworks import Framework
from components.config.hosts import Node, NodeSpec, Pool, Ssh
from components.config.images import Image
from components.config.node_checks import resolve_nodes
from components.config.packages import Packages
from components.config.problems import NAMESPACE, Problem, SpecError, field_path, from_validation_error, with_node_names
from components.config.redact import preview_key
from components.config.registry import Images, check_registry_credentials
from components.config.release_set import with_set_images
from components.config.validation_images import canaries_per_chip, job_nodes, parsed_job_image
from components.config.versions import Versions


@dataclass(frozen=True)
class ConfigKey:
    """One top-level config key: the type it parses into, whether stacks must set it, the StackSpec field it fills."""

    name: str
    annotation: Any
    description: str
    required: bool = False
    secret: bool = False
    attr: str = ""
    # The field's value from every parsed section, when it is not the key's own value as parsed.
    build: Optional[Callable[[dict[str, Any]], Any]] = None


_KEY = "config key"


def section(description: str, required: bool = False, parses: Any = None,
            build: Optional[Callable[[dict[str, Any]], Any]] = None) -> Any:
    """A StackSpec field read from the config key of its camel-case name, parsed as `parses` or the field's type."""
    return field(metadata={_KEY: ConfigKey("", parses, description, required, build=build)})


def secret(description: str) -> Any:
    """A StackSpec field for a secret config key: handed to parse_stack apart, an Output or None, never shown."""
    return field(default=None, repr=False, metadata={_KEY: ConfigKey("", str, description, secret=True)})


@dataclass(frozen=True, kw_only=True)
class StackSpec:
    """The validated stack; each field declared with `section` or `secret` is a config key of its camel-case name."""

    cluster: Cluster = section("The cluster: name, namespace, default container runtime.", required=True)
    ssh: Ssh = section("How to reach the nodes: user, port, agent, bastion.")
    ssh_private_key: Any = secret("Private key for SSH; set it with `pulumi config set --secret sshPrivateKey < key` "
                                  "(never in plain text). Not needed with `ssh.useAgent`.")
    mirror_credentials: Any = secret(
        "Login for the package mirror as `user:password`; set it with `pulumi config set --secret mirrorCredentials` "
        "(never in plain text, never in the URL). It reaches the node on the install command's stdin, never on a "
        "command line.")
    pools: dict[str, Pool] = section("Named defaults (chip, arch, npuCount, containerRuntime) for nodes.")
    nodes: tuple[NodeSpec, ...] = section("The NPU servers; `name` is the Kubernetes node name.", required=True,
                                          parses=list[Node], build=lambda parsed: tuple(resolve_nodes(parsed)[0]))
    versions: Versions = section("Exact firmware, driver, CANN and Ascend Docker Runtime versions.", required=True)
    frameworks: tuple[Framework, ...] = section(
        "The AI frameworks the workloads use (torch_npu, MindSpore), checked against `versions.cann` and Python by "
        "each framework's own compatibility table.", parses=list[Framework],
        build=lambda parsed: tuple(parsed["frameworks"]))
    packages: Packages = section("The `.run` installers: source, files and SHA-256 sums.", required=True)
    rollout: Rollout = section("Canary nodes, nodes per wave, reboot, downgrade, disruption and destroy behaviour.")
    device_plugin: DevicePlugin = section("Ascend device plugin: image, Volcano mode, resources.")
    exporter: Exporter = section("NPU exporter: on/off, image, port, resources.")
    monitoring: Monitoring = section("Prometheus Operator objects, Prometheus pods, alert thresholds.")
    validation: Validation = section("End-to-end validation job on a canary node.")
    dashboard_access: DashboardAccess = section("Optional read-only Kubernetes Dashboard access.")
    images: Images = section("The site registry every image is pulled from, and the pull secret of every Pod.")
    registry_credentials: Any = secret(
        "Login for `images.registry` as `user:password`; set it with `pulumi config set --secret registryCredentials` "
        "(never in plain text). The stack keeps it in one `kubernetes.io/dockerconfigjson` Secret, "
        "`ascend-npu-registry`, in `cluster.namespace`, named by every Pod.")

    @property
    def canaries(self) -> tuple[str, ...]:
        """The listed canaries, and the first node of each chip type none of them has."""
        return canaries_per_chip(self.nodes, self.rollout.canaries)

    @property
    def validation_jobs(self) -> dict[str, tuple[str, Image]]:
        """Chip type -> (canary, image) of its validation Job; empty when validation is off."""
        if not self.validation.enabled:
            return {}
        return {chip: (node, parsed_job_image(self.validation.images, self.versions.cann, chip))
                for chip, node in job_nodes(self.nodes, self.canaries).items()}

    def node(self, name: str) -> NodeSpec:
        return next(n for n in self.nodes if n.name == name)


def config_keys(spec: type) -> tuple[ConfigKey, ...]:
    """The config keys a spec class declares, in field order, each named after its field in camel case."""
    hints = typing.get_type_hints(spec)
    return tuple(replace(f.metadata[_KEY], name=to_camel(f.name), attr=f.name,
                         annotation=f.metadata[_KEY].annotation or hints[f.name])
                 for f in fields(spec) if _KEY in f.metadata)


CONFIG_KEYS = config_keys(StackSpec)
KEYS_BY_NAME = {k.name: k for k in CONFIG_KEYS}


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
    return with_set_images(parsed), problems


def parse_stack(raw: dict[str, Any], private_key: Any = None, private_key_is_secret: bool = True,
                mirror_credentials: Any = None, mirror_credentials_is_secret: bool = True,
                secret_sections: Collection[str] = (), stack: str = "<stack>", registry_credentials: Any = None,
                registry_credentials_is_secret: bool = True, registry_login_text: Optional[str] = None) -> StackSpec:
    """Raw config values (key without namespace -> value) to a StackSpec, or SpecError with every problem."""
    # registry_login_text: the login's plain text where the engine hands it over, so its form can be checked.
    parsed, problems = parse_sections(raw, secret_sections)
    problems += run_checks(parsed, private_key is not None, private_key_is_secret, stack)
    problems += check_mirror_credentials(parsed.get("packages"), mirror_credentials is not None,
                                         mirror_credentials_is_secret)
    problems += check_registry_credentials(parsed.get("images"), registry_credentials is not None,
                                           registry_credentials_is_secret, registry_login_text)
    if problems:
        raise SpecError(with_node_names(problems, raw.get("nodes")))
    return StackSpec(ssh_private_key=private_key, mirror_credentials=mirror_credentials,
                     registry_credentials=registry_credentials,
                     **{k.attr: k.build(parsed) if k.build else parsed[k.name] for k in CONFIG_KEYS if not k.secret})
