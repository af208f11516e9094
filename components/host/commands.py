"""The exact command strings and stdin of a node's host steps, built from the stack spec."""
from __future__ import annotations

import hashlib
from functools import lru_cache
import shlex
from dataclasses import dataclass
from pathlib import Path

from components.config import StackSpec
from components.config.hosts import ContainerRuntime, NodeSpec
from components.config.packages import NEEDS_ARCH, NEEDS_CHIP, Kind, PackageFile, Source
from components.releases.catalog import release_entry

SCRIPTS = Path(__file__).parent / "scripts"
DEFAULT_STAGING = "/var/cache/ascend-npu/packages"
# Each step's script: lib.sh, the Python parts it runs (one bundle), the shell parts it uses, then the step's own
# file (which calls main).
STEP_PARTS = {
    "install": ("lib.sh", "run_lock.sh", "npu_smi.sh", "guards.sh", "preflight.sh", "packages.sh", "npu_stack.sh",
                "compat.sh", "engine_docker.sh", "engine_containerd.sh", "config_journal.sh", "install.sh"),
    "verify": ("lib.sh", "npu_smi.sh", "compat.sh", "verify.sh"),
    "uninstall": ("lib.sh", "run_lock.sh", "npu_smi.sh", "guards.sh", "packages.sh", "npu_stack.sh", "engine_docker.sh",
                  "engine_containerd.sh", "config_journal.sh", "uninstall.sh"),
}
# cri-dockerd hands a pod's runtime handler (its RuntimeClass) to Docker only from 0.4.0: Mirantis/cri-dockerd#350
# (merged 2024-04) was not taken into release/0.3 (#387 stays open); ../shared facts, section 6.
CRI_DOCKERD_MIN_FOR_RUNTIME_CLASS = "0.4.0"
STEP_PYTHON = {
    "install": ("config_files.py", "originals.py", "daemon_json.py", "containerd_config.py", "npu_smi.py",
                "versions.py", "firmware_compat.py"),
    "verify": ("npu_smi.py", "verify_report.py", "firmware_compat.py"),
    "uninstall": ("config_files.py", "originals.py", "daemon_json.py", "containerd_config.py", "versions.py"),
}
# python3 -c runs this with the modules' sources in SOURCES: they import each other as files would, and
# `py MODULE ARG...` (lib.sh) calls MODULE.main(ARGS). Linux caps one argument at 128 KiB (MAX_ARG_STRLEN).
BUNDLE_LOADER = """import importlib.abc, importlib.util, sys
SOURCES = %r
class Bundle(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in SOURCES else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        exec(compile(SOURCES[module.__name__], module.__name__ + ".py", "exec"), module.__dict__)
sys.meta_path.insert(0, Bundle())
sys.exit(importlib.import_module(sys.argv[1]).main(sys.argv[2:]))
"""
BUNDLE_LIMIT = 128 * 1024
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
    """The self-contained script of a step: lib.sh, its Python bundle, then the other parts concatenated."""
    first, *rest = STEP_PARTS[step]
    return _joined(SCRIPTS, (first,)) + python_bundle(step) + _joined(SCRIPTS, tuple(rest))


@lru_cache(maxsize=None)
def _joined(directory: Path, parts: tuple[str, ...]) -> str:
    """Read once per run: every node's steps carry the same scripts."""
    return "".join((directory / part).read_text() for part in parts)


def python_bundle(step: str) -> str:
    """The shell lines that set PYTHON_BUNDLE: the loader with the step's Python parts as strings."""
    return _bundle(SCRIPTS, STEP_PYTHON[step])


@lru_cache(maxsize=None)
def _bundle(directory: Path, modules: tuple[str, ...]) -> str:
    sources = {name.removesuffix(".py"): (directory / name).read_text() for name in modules}
    program = BUNDLE_LOADER % sources
    if len(program.encode()) >= BUNDLE_LIMIT:
        raise ValueError(f"the Python parts of a step exceed {BUNDLE_LIMIT} bytes, python3 -c could not take them")
    # A quoted here-document keeps every byte; the loader is one line per statement and SOURCES one repr line, so
    # no line of it can equal the delimiter.
    return f"read -r -d '' PYTHON_BUNDLE <<'ASCEND_NPU_PYTHON' || true\n{program}ASCEND_NPU_PYTHON\n"


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
    """The wanted versions, and what the runtime's installer records for its release (from the release catalog)."""
    v = spec.versions
    return [("ASCEND_DRIVER_VERSION", v.driver), ("ASCEND_FIRMWARE_VERSION", v.firmware),
            ("ASCEND_CANN_VERSION", v.cann), ("ASCEND_DOCKER_RUNTIME_VERSION", v.docker_runtime),
            ("ASCEND_DOCKER_RUNTIME_RECORD", runtime_record_version(v.docker_runtime))]


def runtime_record_version(release: str) -> str:
    """The `version=` value the runtime's installer records for RELEASE (`v6.0.0`), from the release catalog."""
    lines = release_entry("docker-runtime", release)["installer"]["record"]["lines"]
    line = next(line for line in lines if line.startswith("version="))
    return line.partition("=")[2].format(version=release)


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
                ("ASCEND_ALLOW_DOWNGRADE", _flag(spec.rollout.allow_downgrade)),
                ("ASCEND_ALLOW_DISRUPTION", _flag(spec.rollout.allow_disruption)),
                ("ASCEND_SOURCE", spec.packages.source.value), ("ASCEND_STAGING", staging_dir)]
    if spec.packages.source is Source.MIRROR:
        settings.append(("ASCEND_MIRROR_URL", spec.packages.mirror_url or ""))
    prompt = release_entry("docker-runtime", spec.versions.docker_runtime)["installer"].get("stdin_prompt")
    if prompt:
        settings.append(("ASCEND_DOCKER_RUNTIME_ANSWER", prompt["answer"]))
    if node.container_runtime is ContainerRuntime.DOCKER and not spec.cluster.ascend_default_runtime:
        settings.append(("ASCEND_CRI_DOCKERD_MIN", CRI_DOCKERD_MIN_FOR_RUNTIME_CLASS))
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
        # pulumi-command v1.2.1 hands the delete command the stored stdin too, the install script
        # (provider/pkg/provider/remote/commandController.go Delete, commandOutputs.go run): the uninstall script is
        # inside the command and reads /dev/null.
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
