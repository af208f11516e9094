"""The node's scripts as files: each step's one self-contained script, rendered once per version, named by its
SHA-256, staged by the runner and run by hash.

A step's call on the node names its scripts by SHA-256 (`ascend-npu install SHA256`, components/runner/on_node.py);
the node's run_step.sh takes a staged script into a root-only directory only when its SHA-256 is the one named. So
the state stores a few hashes per node instead of ~100 KB of scripts, and a script change changes exactly the steps
that run it: each step names its own scripts, nothing names them all.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from components.host.catalog_facts import render
from components.host.parameters import step_names
from components.runner.staging import SCRIPTS as RENDERED
from components.runner.staging import script_file

SCRIPTS = Path(__file__).parent / "scripts"
SET_STEPS = ("install", "verify", "uninstall", "on_destroy", "npu_network")
# Each step's script: lib.sh, the Python parts it runs (one bundle), the shell parts it uses, then the step's own
# file (which calls main).
STEP_PARTS = {
    "install": ("lib.sh", "catalog.sh", "run_lock.sh", "npu_smi.sh", "guards.sh", "node_identity.sh",
                "prerequisites.sh", "preflight.sh", "packages.sh", "npu_stack.sh", "compat.sh", "engine_docker.sh",
                "engine_containerd.sh", "config_journal.sh", "install.sh"),
    "verify": ("lib.sh", "catalog.sh", "npu_smi.sh", "compat.sh", "verify.sh"),
    "uninstall": ("lib.sh", "run_lock.sh", "npu_smi.sh", "guards.sh", "packages.sh", "npu_stack.sh", "engine_docker.sh",
                  "engine_containerd.sh", "config_journal.sh", "uninstall.sh"),
    "on_destroy": ("lib.sh", "on_destroy.sh"),
    "npu_network": ("lib.sh", "npu_network.sh"),
}
STEP_PYTHON = {
    "install": ("config_files.py", "originals.py", "daemon_json.py", "containerd_config.py", "npu_smi.py",
                "versions.py", "firmware_compat.py", "kubelet_identity.py"),
    "verify": ("npu_smi.py", "verify_report.py", "firmware_compat.py"),
    "uninstall": ("config_files.py", "originals.py", "daemon_json.py", "containerd_config.py", "versions.py"),
    "on_destroy": (),
    "npu_network": ("npu_network_report.py",),
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


def script_text(step: str, directory: Path | None = None) -> str:
    """The self-contained script of a step: lib.sh, the parameters it requires, the release catalog's facts it looks
    up (catalog_facts.py, with catalog.sh), its Python bundle, then the other parts concatenated."""
    directory = directory or SCRIPTS
    first, *rest = STEP_PARTS[step]
    required = f"STEP_PARAMS=({' '.join(step_names(step))})\n"
    return (_joined(directory, (first,)) + required + render(step) + _bundle(directory, STEP_PYTHON[step])
            + _joined(directory, tuple(rest)))


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


def step_sha256(step: str) -> str:
    """The SHA-256 of a step's script file as staged on the node."""
    return _sha256(SCRIPTS, step)


@lru_cache(maxsize=None)
def _sha256(directory: Path, step: str) -> str:
    return hashlib.sha256(script_text(step, directory).encode()).hexdigest()


def rendered(step: str, base: Path = RENDERED) -> Path:
    """STEP's script as a file the runner stages (written once per version, atomically; a run reads it once)."""
    return _rendered(base, SCRIPTS, step)


@lru_cache(maxsize=None)
def _rendered(base: Path, directory: Path, step: str) -> Path:
    target = script_file(step, _sha256(directory, step), base)
    if not target.is_file():
        base.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=base, prefix=f".{step}.")
        with os.fdopen(fd, "w") as out:
            out.write(script_text(step, directory))
        os.replace(scratch, target)  # another run may have written the same bytes first
    return target
