"""The host steps' parameters: every ASCEND_* variable a step's command sets, declared once, with its derivation."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec
from components.config.npu_network import entries
from components.config.packages import Kind, PackageFile, Source, declared_version
from components.config.timeouts import DEFAULTS as TIMEOUT_DEFAULTS
from components.host.os_support import listed, lists_for
from components.releases.catalog import component_releases

STEPS = ("install", "verify", "on_destroy", "npu_network")
# The uninstall step runs with the parameters the last install recorded on the node (run_destroy.sh).
RUNS_WITH = {"uninstall": "install"}
# ASCEND_* names the scripts use that no command sets: the test node's sandbox root (its sshd's SetEnv) and the
# Ascend home under it (lib.sh).
NOT_PARAMETERS = ("ASCEND_ROOT", "ASCEND_HOME")
ACTIONS = ("fresh", "upgrade", "uninstall")
# The catalog file of each package kind's installer; the runtime's flags are not ascend-deployer's (below).
INSTALLER_CATALOG = {Kind.DRIVER: "npu-driver", Kind.FIRMWARE: "npu-firmware", Kind.TOOLKIT: "cann",
                     Kind.KERNELS: "cann"}
# run_main.sh of every catalogued runtime release: one action, and the engine it acts on (--uninstall acts on the
# docker scene without it; components/releases/docker-runtime.yaml).
RUNTIME_FLAGS = {"fresh": "--install", "upgrade": "--upgrade", "uninstall": "--uninstall"}


@dataclass(frozen=True)
class Inputs:
    """What a node's parameters are derived from: the stack, the node, and the facts read for them elsewhere."""

    spec: StackSpec
    node: NodeSpec
    staging: str
    packages: dict[Kind, PackageFile]
    runtime_record: str
    runtime_answer: str
    cri_dockerd_min: str
    uninstall_sha256: str


@dataclass(frozen=True)
class Param:
    """One parameter: name, the form of its value, meaning, the steps that get it, how the stack gives it; an
    optional one is always set, maybe empty. `group` names the install trigger it feeds; `by`, the parameters a
    catalog fact is looked up by; `default`, the value the scripts set when the command leaves it out."""

    name: str
    form: str
    meaning: str
    steps: tuple[str, ...]
    derive: Callable[[Inputs], Any]
    optional: bool = False
    group: str = "settings"
    # A catalog fact: the scripts look it up by these parameters' values (catalog_facts.py); no command carries it.
    by: Optional[tuple[str, ...]] = None
    # The value most stacks give: the scripts hold it (catalog_facts.py), and a command carries only another one.
    default: Optional[str] = None


def kind_prefix(kind: Kind) -> str:
    """A kind in its parameters' names: dockerRuntime -> DOCKER_RUNTIME (lib.sh's kind_var spells it alike)."""
    return re.sub(r"([A-Z])", r"_\1", kind.value).upper()


def _flag(value: bool) -> str:
    return "true" if value else "false"


def installer_flags(kind: Kind, version: str, engine: str) -> dict[str, str]:
    """The installer flags of each action for KIND's release, from the release catalog (a release it does not list
    takes its newest one's: the flags are the same for every catalogued release)."""
    if kind is Kind.DOCKER_RUNTIME:
        return {action: f"{flag} --install-scene={engine}" for action, flag in RUNTIME_FLAGS.items()}
    releases = component_releases(INSTALLER_CATALOG[kind])
    release = next((name for name in releases if name.lower() == version.lower()), list(releases)[-1])
    installer = releases[release].installer
    return {action: " ".join(getattr(installer, action)) for action in ACTIONS}


def _version(inputs: Inputs, kind: Kind) -> str:
    return declared_version(inputs.spec.versions, kind)


def _timeout(inputs: Inputs, kind: Kind) -> int:
    return getattr(inputs.spec.rollout.timeouts, kind_prefix(kind).lower())


def _flags(action: str) -> Callable[[Inputs, Kind], str]:
    def derive(inputs: Inputs, kind: Kind) -> str:
        return installer_flags(kind, _version(inputs, kind), inputs.node.container_runtime.value)[action]
    return derive


def _package(inputs: Inputs, kind: Kind, field: str) -> str:
    found = inputs.packages.get(kind)
    return getattr(found, field) if found else ""


def _mirror(inputs: Inputs) -> bool:
    return inputs.spec.packages.source is Source.MIRROR


def _cri_dockerd_min(inputs: Inputs) -> str:
    docker = inputs.node.container_runtime is ContainerRuntime.DOCKER
    return inputs.cri_dockerd_min if docker and not inputs.spec.cluster.ascend_default_runtime else ""


def per_kind(field: str, form: str, meaning: str, steps: tuple[str, ...], derive: Callable[[Inputs, Kind], Any],
             optional: bool = False, group: str = "settings",
             by: Optional[Callable[[Kind], tuple[str, ...]]] = None,
             default: Optional[Callable[[Kind], str]] = None) -> list[Param]:
    """ASCEND_<KIND>_FIELD for every installer kind (the scripts read it with `kind_var KIND FIELD`)."""
    def of(kind: Kind) -> Callable[[Inputs], Any]:
        return lambda inputs: derive(inputs, kind)

    return [Param(f"ASCEND_{kind_prefix(kind)}_{field}", form, f"{meaning} ({kind.value})", steps, of(kind),
                  optional, group, by(kind) if by else None, default(kind) if default else None) for kind in Kind]


def _flags_by(kind: Kind) -> tuple[str, ...]:
    """An installer's flags follow its release; the runtime's, the engine (RUNTIME_FLAGS)."""
    return ("ASCEND_ENGINE",) if kind is Kind.DOCKER_RUNTIME else (f"ASCEND_{kind_prefix(kind)}_VERSION",)


def _answer_by(kind: Kind) -> tuple[str, ...]:
    return ("ASCEND_DOCKER_RUNTIME_VERSION",) if kind is Kind.DOCKER_RUNTIME else ()


INSTALL, VERIFY, BOTH = ("install",), ("verify",), ("install", "verify")
KINDS = " ".join(kind.value for kind in Kind)
OFF = "false"
GIVEN = "ASCEND_GIVEN"
PARAMETERS: tuple[Param, ...] = (
    Param("ASCEND_NODE", "name", "the node's name in the stack", ("install", "verify", "on_destroy", "npu_network"),
          lambda i: i.node.name),
    Param("ASCEND_ARCH", "aarch64|x86_64", "the node's architecture", BOTH, lambda i: i.node.arch.value),
    Param("ASCEND_NPU_COUNT", "count", "chips npu-smi must show", VERIFY, lambda i: i.node.npu_count),
    # Set by command_parameters: an inherited variable of a name the command leaves out never reads as its value.
    Param(GIVEN, "names", "which parameters with a usual value this command sets; the scripts set the others to it",
          BOTH, lambda i: "", optional=True, group="given"),
    Param("ASCEND_KINDS", "kinds", "the installer kinds in install order", BOTH, lambda i: KINDS, default=KINDS),
    Param("ASCEND_ENGINE", "docker|containerd", "the node's container engine", INSTALL,
          lambda i: i.node.container_runtime.value),
    Param("ASCEND_DEFAULT_RUNTIME", "true|false", "cluster.ascendDefaultRuntime", INSTALL,
          lambda i: _flag(i.spec.cluster.ascend_default_runtime), default=OFF),
    Param("ASCEND_ALLOW_REBOOT", "true|false", "rollout.allowReboot", INSTALL,
          lambda i: _flag(i.spec.rollout.allow_reboot), default=OFF),
    Param("ASCEND_ALLOW_DOWNGRADE", "true|false", "rollout.allowDowngrade", INSTALL,
          lambda i: _flag(i.spec.rollout.allow_downgrade), default=OFF),
    Param("ASCEND_ALLOW_DISRUPTION", "true|false", "rollout.allowDisruption", INSTALL,
          lambda i: _flag(i.spec.rollout.allow_disruption), default=OFF),
    Param("ASCEND_SOURCE", "upload|mirror", "packages.source", INSTALL, lambda i: i.spec.packages.source.value),
    Param("ASCEND_STAGING", "path", "where the node keeps the package files", INSTALL, lambda i: i.staging),
    Param("ASCEND_MIRROR_URL", "url", "packages.mirrorUrl; empty for an upload", INSTALL,
          lambda i: (i.spec.packages.mirror_url or "") if _mirror(i) else "", optional=True, default=""),
    Param("ASCEND_MIRROR_LOGIN", "stdin", "`stdin` when the mirror login comes as the one line of stdin", INSTALL,
          lambda i: "stdin" if _mirror(i) and i.spec.mirror_credentials is not None else "", optional=True,
          default=""),
    Param("ASCEND_CRI_DOCKERD_MIN", "version", "the cri-dockerd a Docker node needs for the ascend RuntimeClass; "
          "empty when it needs none", INSTALL, _cri_dockerd_min, optional=True, default=""),
    Param("ASCEND_ENGINE_RESTART_TIMEOUT", "seconds", "rollout.timeouts.engineRestart", INSTALL,
          lambda i: i.spec.rollout.timeouts.engine_restart, default=str(TIMEOUT_DEFAULTS["engine_restart"])),
    Param("ASCEND_CHIP", "chip", "the node's chip", INSTALL, lambda i: i.node.chip.value),
    Param("ASCEND_OS_LISTS", "titles", "the OS lists read for the chip (components/releases/os-support.yaml)",
          INSTALL, lambda i: "; ".join(found.title for found in lists_for(i.node.chip.value)), optional=True,
          by=("ASCEND_CHIP",)),
    Param("ASCEND_OS_LISTED", "ID/VERSION_ID[/CODENAME]...", "what those lists match for the node's arch", INSTALL,
          lambda i: " ".join(listed(i.node.chip.value, i.node.arch.value)), optional=True,
          by=("ASCEND_CHIP", "ASCEND_ARCH")),
    *per_kind("VERSION", "version", "the wanted version", BOTH, _version, group="versions"),
    Param("ASCEND_DOCKER_RUNTIME_RECORD", "text", "the `version=` value the runtime's installer records", BOTH,
          lambda i: i.runtime_record, group="versions", by=("ASCEND_DOCKER_RUNTIME_VERSION",)),
    *per_kind("FILE", "file name", "the .run file", INSTALL, lambda i, kind: _package(i, kind, "file"),
              group="packages"),
    *per_kind("SHA256", "sha256", "the .run file's SHA-256", INSTALL, lambda i, kind: _package(i, kind, "sha256"),
              group="packages"),
    *per_kind("TIMEOUT", "seconds", "how long the installer may run (rollout.timeouts)", INSTALL, _timeout,
              default=lambda kind: str(TIMEOUT_DEFAULTS[kind_prefix(kind).lower()])),
    *per_kind("ANSWER", "text", "what the installer is answered on stdin; empty when it asks nothing", INSTALL,
              lambda i, kind: i.runtime_answer if kind is Kind.DOCKER_RUNTIME else "", optional=True, by=_answer_by),
    *per_kind("FRESH_FLAGS", "flags", "installer flags on a host without it", INSTALL, _flags("fresh"),
              by=_flags_by),
    *per_kind("UPGRADE_FLAGS", "flags", "installer flags over an installed version", INSTALL, _flags("upgrade"),
              by=_flags_by),
    *per_kind("UNINSTALL_FLAGS", "flags", "installer flags to remove it", INSTALL, _flags("uninstall"),
              by=_flags_by),
    Param("ASCEND_ON_DESTROY", "uninstall|keep", "rollout.uninstallOnDestroy", ("on_destroy",),
          lambda i: "uninstall" if i.spec.rollout.uninstall_on_destroy else "keep"),
    Param("ASCEND_UNINSTALL_SHA256", "sha256", "the uninstall script a destroy runs", ("on_destroy",),
          lambda i: i.uninstall_sha256),
    Param("ASCEND_NPU_NETWORK", "NPU,ADDRESS,NETMASK,GATEWAY,DETECT ...", "nodes[].npuNetwork, one entry per NPU",
          ("npu_network",), lambda i: entries(i.node.npu_network)),
    Param("ASCEND_NPU_NETWORK_TIMEOUT", "seconds", "rollout.timeouts.npuNetwork", ("npu_network",),
          lambda i: i.spec.rollout.timeouts.npu_network),
)
# The parameters the release catalog decides, which the scripts look up (catalog_facts.py).
CATALOG_FACTS = frozenset(param.name for param in PARAMETERS if param.by is not None)
# The parameters with a usual value, which a command carries only when it differs.
DEFAULTS = {param.name: param.default for param in PARAMETERS if param.default is not None}
KIND_FIELDS = ("VERSION", "FILE", "SHA256", "TIMEOUT", "ANSWER", "FRESH_FLAGS", "UPGRADE_FLAGS", "UNINSTALL_FLAGS")


def step_names(step: str) -> tuple[str, ...]:
    """The parameters a step's script requires at its start."""
    step = RUNS_WITH.get(step, step)
    return tuple(param.name for param in PARAMETERS if step in param.steps)


def command_parameters(step: str, inputs: Inputs) -> list[tuple[str, str]]:
    """The step's parameters its command sets: all but the catalog facts, which its script looks up, and those with
    their usual value, which its script sets (catalog_facts.py)."""
    params = step_parameters(step, inputs)
    given = " ".join(name for name, value in params if name in DEFAULTS and value != DEFAULTS[name])
    return [(name, given if name == GIVEN else value) for name, value in params
            if name not in CATALOG_FACTS and (name not in DEFAULTS or name in given.split())]


def step_parameters(step: str, inputs: Inputs, group: str | None = None) -> list[tuple[str, str]]:
    """The step's parameters for one node, in declaration order (of one trigger group, when given); a value a
    required parameter lacks, or one with a line break, is refused here, before any node is touched."""
    params = []
    for param in PARAMETERS:
        if step not in param.steps or group not in (None, param.group):
            continue
        value = str(param.derive(inputs))
        if "\n" in value or not (value or param.optional):
            raise ValueError(f"host parameter {param.name} ({param.meaning}) of node {inputs.node.name} is "
                             f"{value!r}: it needs a one-line value")
        params.append((param.name, value))
    return params
