"""The node's scripts as files: rendered once per run, staged by CopyToRemote, run by hash.

Each step's command is `env K=V ... bash -c RUN_STEP STEP SHA256...` (scripts/run_step.sh): the node takes the staged
script into a root-only directory only when its SHA-256 is the one the command names, so the state stores a few
hashes per node instead of ~100 KB of scripts, and a script change still changes exactly the commands that run it.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import tempfile
from functools import lru_cache
from pathlib import Path

SCRIPTS = Path(__file__).parent / "scripts"
# CopyToRemote puts a directory source at `remotePath/<its name>` (pulumi-command v1.2.1,
# provider/pkg/provider/remote/copyController.go); run_step.sh reads the scripts from there.
STAGED_PARENT, STAGED_NAME = "/var/tmp", "ascend-npu-scripts"
# Where a run renders the scripts for the copy, relative to the program's folder (the project).
LOCAL_SETS = Path(".ascend-npu") / "scripts"
SET_STEPS = ("install", "verify", "uninstall", "on_destroy", "npu_network")
# Run inside the commands themselves (`bash -c`), never staged: they are what checks the staged scripts.
INLINED = ("run_step.sh", "run_destroy.sh")
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


def script_text(step: str) -> str:
    """The self-contained script of a step: lib.sh, the parameters it requires, the release catalog's facts it looks
    up (catalog_facts.py, with catalog.sh), its Python bundle, then the other parts concatenated."""
    # The config model and the catalog: not for node_step, which needs neither.
    from components.host.catalog_facts import render
    from components.host.parameters import step_names

    first, *rest = STEP_PARTS[step]
    required = f"STEP_PARAMS=({' '.join(step_names(step))})\n"
    return _joined(SCRIPTS, (first,)) + required + render(step) + python_bundle(step) + _joined(SCRIPTS, tuple(rest))


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
    return hashlib.sha256(script_text(step).encode()).hexdigest()


def set_id() -> str:
    """Names one version of the whole script set (the local folder the copy reads)."""
    return hashlib.sha256("".join(step_sha256(step) for step in SET_STEPS).encode()).hexdigest()[:16]


def local_script_set(base: Path = LOCAL_SETS) -> str:
    """The folder this version of the scripts is rendered in (written once, atomically), for CopyToRemote."""
    return _rendered(base, SCRIPTS)


@lru_cache(maxsize=None)
def _rendered(base: Path, directory: Path) -> str:
    """Once per run and scripts folder, not once per node."""
    folder = base / set_id() / STAGED_NAME
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".render-"))
        for step in SET_STEPS:
            (scratch / f"{step}.sh").write_text(script_text(step))
        try:
            os.rename(scratch, folder)
        except OSError:  # another run rendered the same set first
            for child in scratch.iterdir():
                child.unlink()
            scratch.rmdir()
    return str(folder)


def run_command(prefix: str, params: list[tuple[str, str]], steps: tuple[str, ...]) -> str:
    """`[sudo -n ]env K=V ... bash -c RUN_STEP ascend-npu STEP SHA256 ...`: the first step runs, all are taken."""
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in params)
    hashes = " ".join(f"{step} {step_sha256(step)}" for step in steps)
    return f"{prefix}env {assignments} bash -c {shlex.quote(_script('run_step.sh'))} ascend-npu {hashes}"


# How the state holds a step's command: its inlined script named, not written out (`bash -c "$ASCEND_NPU_RUN_STEP"`).
# node_step puts the text back before it sends the command (sent()), so the node runs exactly what run_command() and
# destroy_command() return; the inlined scripts, about 1.1 KB each, so stay out of every step's stored inputs and
# outputs. A command stored whole (the release before this form) contains no name and is sent as stored.
HELD = {"run_step.sh": "$ASCEND_NPU_RUN_STEP", "run_destroy.sh": "$ASCEND_NPU_RUN_DESTROY"}
# What follows the call, to the end of the command: STEP SHA256 pairs (run_step), or one quoted node name.
CALL_ENDS = {"run_step.sh": re.compile(r"[a-z_]+ [0-9a-f]{64}( [a-z_]+ [0-9a-f]{64})*"),
             "run_destroy.sh": re.compile(r"[\w@%+=:,./-]+|'[^']*'")}


def stored(command: str) -> str:
    """COMMAND as a step's environment holds it in the state: the inlined script of its call by name."""
    for script, name in HELD.items():
        command = _swap(command, script, f"bash -c {shlex.quote(_script(script))} ascend-npu ",
                        f'bash -c "{name}" ascend-npu ')
    return command


def sent(command: str) -> str:
    """A stored command as the node runs it: the name in its call, the one that ends the command, replaced by the
    script; the same words anywhere else (inside a quoted value) stay as they are."""
    for script, name in HELD.items():
        command = _swap(command, script, f'bash -c "{name}" ascend-npu ',
                        f"bash -c {shlex.quote(_script(script))} ascend-npu ")
    return command


def _swap(command: str, script: str, old: str, new: str) -> str:
    head, found, tail = command.rpartition(old)
    return head + new + tail if found and CALL_ENDS[script].fullmatch(tail) else command


def named_scripts(command: str) -> list[tuple[str, str]]:
    """The (step, SHA-256) pairs a run_command() text takes, from the words after its last `ascend-npu`."""
    words = shlex.split(command)
    tail = words[len(words) - words[::-1].index("ascend-npu"):] if "ascend-npu" in words else []
    return list(zip(tail[::2], tail[1::2]))


def destroy_command(prefix: str, node: str) -> str:
    """The on-destroy step's delete: one text for every stack and setting, doing what the node's record says."""
    return f"{prefix}bash -c {shlex.quote(_script('run_destroy.sh'))} ascend-npu {shlex.quote(node)}"


@lru_cache(maxsize=None)
def _script(name: str) -> str:
    """An inlined script without its comment lines: they would be stored in the state once per command."""
    lines = (SCRIPTS / name).read_text().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#")) + "\n"
