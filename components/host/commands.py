"""The exact command strings and stdin of a node's host steps, built from the stack spec."""
from __future__ import annotations

import hashlib
from functools import lru_cache
import shlex
from dataclasses import dataclass
from pathlib import Path

from components.spec import StackSpec
from components.spec.hosts import NodeSpec
from components.spec.packages import NEEDS_ARCH, NEEDS_CHIP, Kind, PackageFile, Source

SCRIPTS = Path(__file__).parent / "scripts"
DEFAULT_STAGING = "/var/cache/ascend-npu/packages"
# Each step's script: lib.sh, the parts it uses, then the step's own file (which calls main).
STEP_PARTS = {
    "install": ("lib.sh", "npu_smi.sh", "preflight.sh", "packages.sh", "npu_stack.sh", "engine_docker.sh",
                "engine_containerd.sh", "install.sh"),
    "verify": ("lib.sh", "npu_smi.sh", "verify.sh"),
    "uninstall": ("lib.sh", "packages.sh", "npu_stack.sh", "engine_docker.sh", "engine_containerd.sh",
                  "uninstall.sh"),
}
# The env prefix of a kind's parameters: ASCEND_<PREFIX>_FILE, ASCEND_<PREFIX>_SHA256.
KIND_PREFIX = {Kind.DRIVER: "DRIVER", Kind.FIRMWARE: "FIRMWARE", Kind.TOOLKIT: "TOOLKIT", Kind.KERNELS: "KERNELS",
               Kind.DOCKER_RUNTIME: "DOCKER_RUNTIME"}


@dataclass(frozen=True)
class HostStep:
    """One remote command of a node: what runs on create/update, its stdin, what runs on destroy, its triggers."""

    name: str
    create: str
    stdin: str
    delete: str | None
    triggers: tuple[str, ...]


def script_text(step: str) -> str:
    """The self-contained script of a step: its parts concatenated, lib.sh first."""
    return _joined(SCRIPTS, STEP_PARTS[step])


@lru_cache(maxsize=None)
def _joined(directory: Path, parts: tuple[str, ...]) -> str:
    """Read once per run: every node's steps carry the same scripts."""
    return "".join((directory / part).read_text() for part in parts)


def node_packages(spec: StackSpec, node: NodeSpec) -> tuple[PackageFile, ...]:
    """The package files a node installs (its chip and arch), in install order; the upload copies exactly these."""
    chosen = []
    for kind in Kind:
        for pkg in spec.packages.files:
            if (pkg.kind is kind and (kind not in NEEDS_CHIP or pkg.chip is node.chip)
                    and (kind not in NEEDS_ARCH or pkg.arch is node.arch)):
                chosen.append(pkg)
                break
    return tuple(chosen)


def _versions(spec: StackSpec) -> list[tuple[str, str]]:
    v = spec.versions
    return [("ASCEND_DRIVER_VERSION", v.driver), ("ASCEND_FIRMWARE_VERSION", v.firmware),
            ("ASCEND_CANN_VERSION", v.cann), ("ASCEND_DOCKER_RUNTIME_VERSION", v.docker_runtime)]


def _packages(spec: StackSpec, node: NodeSpec) -> list[tuple[str, str]]:
    params = []
    for pkg in node_packages(spec, node):
        params += [(f"ASCEND_{KIND_PREFIX[pkg.kind]}_FILE", pkg.file),
                   (f"ASCEND_{KIND_PREFIX[pkg.kind]}_SHA256", pkg.sha256)]
    return params


def _install_settings(spec: StackSpec, node: NodeSpec, staging_dir: str) -> list[tuple[str, str]]:
    settings = [("ASCEND_ARCH", node.arch.value), ("ASCEND_ENGINE", node.container_runtime.value),
                ("ASCEND_DEFAULT_RUNTIME", _flag(spec.cluster.ascend_default_runtime)),
                ("ASCEND_ALLOW_REBOOT", _flag(spec.rollout.allow_reboot)),
                ("ASCEND_SOURCE", spec.packages.source.value), ("ASCEND_STAGING", staging_dir)]
    if spec.packages.source is Source.MIRROR:
        settings.append(("ASCEND_MIRROR_URL", spec.packages.mirror_url or ""))
    return settings


def _verify_settings(node: NodeSpec) -> list[tuple[str, str]]:
    return [("ASCEND_NODE", node.name), ("ASCEND_ARCH", node.arch.value), ("ASCEND_NPU_COUNT", str(node.npu_count))]


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _digest(*parts: object) -> str:
    """A short hash that is the same on every run for the same parts."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:16]


def _command(spec: StackSpec, params: list[tuple[str, str]], inline_script: str | None = None) -> str:
    """`[sudo -n ]env K=V ... bash -s`, or `bash -c SCRIPT` when the script cannot come on stdin."""
    sudo = "" if spec.ssh.user == "root" else "sudo -n "
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in params)
    shell = "bash -s" if inline_script is None else f"bash -c {shlex.quote(inline_script)}"
    return f"{sudo}env {assignments} {shell}"


def with_mirror_credentials(stdin: str, credentials: str) -> str:
    """The install script with the mirror login set in its first line: it travels on stdin, never on a command line
    (the shell keeps it unexported, and curl reads it from a pipe)."""
    return f"ASCEND_MIRROR_CREDENTIALS={shlex.quote(credentials)}\n{stdin}"


def host_steps(spec: StackSpec, node: NodeSpec, staging_dir: str = DEFAULT_STAGING) -> dict[str, HostStep]:
    """The node's `install` and `verify` steps; parameters travel in the command, never in the SSH environment."""
    versions, packages = _versions(spec), _packages(spec, node)
    install_settings, verify_settings = _install_settings(spec, node, staging_dir), _verify_settings(node)
    install_params = install_settings + versions + packages
    install_script, verify_script = script_text("install"), script_text("verify")
    delete = None
    if spec.rollout.uninstall_on_destroy:
        # Destroy gets no stdin: the uninstall script travels inside the command.
        delete = _command(spec, install_params, inline_script=script_text("uninstall"))
    versions_hash = f"versions:{_digest(*versions)}"
    install = HostStep(
        name="install", create=_command(spec, install_params), stdin=install_script, delete=delete,
        triggers=(versions_hash, f"packages:{_digest(*packages)}", f"settings:{_digest(*install_settings)}",
                  f"script:{_digest(install_script)}"))
    verify = HostStep(
        name="verify", create=_command(spec, verify_settings + versions), stdin=verify_script, delete=None,
        triggers=(versions_hash, f"node:{_digest(*verify_settings)}", f"script:{_digest(verify_script)}"))
    return {"install": install, "verify": verify}
