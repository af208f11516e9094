"""The interpreter the Pulumi CLI runs a Python policy pack with, read from the pack's PulumiPolicy.yaml as it reads it.

The CLI starts a pack of `runtime: python` through the Python language host, with the interpreter of the virtualenv
that `runtime.options.virtualenv` names (relative to the pack's folder), else `python3` from PATH. It creates no
virtualenv: when the one named is missing, `pulumi preview --policy-pack` (v3.274.0 with its language host) waits at
"Loading policy packs...: starting" with no message, ignoring SIGTERM. The offline plan starts the pack with the same
interpreter, so a missing or broken environment is named here, with its fix, before the CLI is ever run.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from components.plan.analyzer import PolicyPackError

ROOT = Path(__file__).resolve().parents[2]
# What the pack's own code imports (policies/requirements.txt), and the runner the language host starts.
NEEDED = "import pulumi_policy, pulumi.policy, yaml"


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _fix(pack_dir: Path, venv: Path) -> str:
    if pack_dir.resolve() == (ROOT / "policies").resolve():
        return "run `make venv` (it links policies/venv to .venv, which holds the pack's requirements)"
    return (f"create it: `python3 -m venv {_shown(venv)} && {_shown(venv)}/bin/pip install -r "
            f"{_shown(pack_dir)}/requirements.txt`")


def pack_python(pack_dir: Path) -> str:
    """The interpreter the CLI would run the pack in PACK_DIR with, checked to start and to import what the pack
    needs; PolicyPackError naming the fix otherwise. A folder without PulumiPolicy.yaml (a test pack) runs here."""
    manifest = pack_dir / "PulumiPolicy.yaml"
    if not manifest.exists():
        return sys.executable
    runtime = (yaml.safe_load(manifest.read_text()) or {}).get("runtime") or {}
    options = runtime.get("options") or {} if isinstance(runtime, dict) else {}
    named = options.get("virtualenv")
    if not named:
        python = shutil.which("python3")
        where = "python3 on PATH"
        if python is None:
            raise PolicyPackError(f"{_shown(manifest)} names no virtualenv and there is no python3 on PATH")
        venv = pack_dir / "venv"
    else:
        venv = Path(os.path.join(pack_dir, named))
        python, where = str(venv / "bin" / "python"), f"the virtualenv `{named}` ({_shown(venv)})"
        if not venv.is_dir():
            raise PolicyPackError(f"{_shown(manifest)} runs the pack in {where}, which does not exist, so "
                                  f"`pulumi preview --policy-pack {_shown(pack_dir)}` would wait for ever at "
                                  f"\"Loading policy packs\": {_fix(pack_dir, venv)}")
    problem = _load_problem(python)
    if problem:
        raise PolicyPackError(f"{_shown(manifest)} runs the pack in {where}, {problem}: {_fix(pack_dir, venv)}")
    return python


@functools.lru_cache(maxsize=None)
def _load_problem(python: str) -> str | None:
    """Why PYTHON cannot run the pack, or None; asked once per interpreter in a process (a plan per test)."""
    try:
        done = subprocess.run([python, "-c", NEEDED], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        return f"whose python does not start ({exc.strerror})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"which cannot load the pack's requirements ({last})"
    return None
