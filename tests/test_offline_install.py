"""docs/air-gapped.md's offline install: `PIP_NO_INDEX=1 PIP_FIND_LINKS=<wheels> make venv` in a copy of the
repository, with a wheel directory `python3 -m pip download --dest <dir> -r requirements-dev.txt` wrote (.ci/run's
wheelhouse step writes it before the tests; pip reaches no index here)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.stacks import ROOT

WHEELHOUSE = Path(os.environ.get("ASCEND_NPU_WHEELHOUSE")
                  or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascend-npu" / "wheelhouse")
FILES = ("Makefile", "requirements.txt", "requirements-dev.txt", "policies/requirements.txt")


@pytest.mark.skipif(not WHEELHOUSE.is_dir(), reason=f"no wheel directory at {WHEELHOUSE}: run .ci/run's wheelhouse "
                                                    "step (pip download -r requirements-dev.txt) first")
def test_make_venv_installs_from_the_wheel_directory_alone(tmp_path):
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE), "PIP_NO_CACHE_DIR": "1"}
    made = subprocess.run(["make", "venv"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    imported = subprocess.run([str(tmp_path / ".venv/bin/python"), "-c",
                               "import pulumi, pulumi_kubernetes, pulumi_command, pulumi_policy, pydantic, yaml; "
                               "from importlib.metadata import version; print(version('pulumi-kubernetes'))"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    pinned = next(line for line in (ROOT / "requirements.txt").read_text().splitlines()
                  if line.startswith("pulumi-kubernetes=="))
    assert imported.stdout.strip() == pinned.split("==", 1)[1]
    assert (tmp_path / "policies/venv").resolve() == (tmp_path / ".venv").resolve()
