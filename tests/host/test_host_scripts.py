"""The host scripts as files: shellcheck clean, and each one readable on its own."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from components.doctor.remote import PROBE
from components.host.script_set import INLINED, SCRIPTS, STEP_PARTS


def test_shellcheck_reports_nothing():
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (apt-get install -y shellcheck)")
    scripts = sorted(p.name for p in SCRIPTS.glob("*.sh"))
    result = subprocess.run(["shellcheck", "-x", *scripts], cwd=SCRIPTS, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    probe = subprocess.run(["shellcheck", str(PROBE)], capture_output=True, text=True)  # the doctor's, read-only
    assert probe.returncode == 0, probe.stdout + probe.stderr


def test_every_script_is_used_by_a_step_and_every_part_exists():
    used = {part for parts in STEP_PARTS.values() for part in parts}
    assert used | set(INLINED) == {p.name for p in SCRIPTS.glob("*.sh")} and not used & set(INLINED)


@pytest.mark.parametrize("step", sorted(STEP_PARTS))
def test_step_scripts_run_from_a_checkout_load_their_parts(step, tmp_path):
    """`bash scripts/install.sh` works too: it sources the parts host_steps() would concatenate."""
    copy = tmp_path / "scripts"
    shutil.copytree(SCRIPTS, copy)
    probe = "declare -F say >/dev/null && declare -F main >/dev/null && echo loaded"
    script = copy / f"{step}.sh"
    *body, last = script.read_text().rstrip("\n").split("\n")
    assert last in ("main </dev/null", "start")  # the one line that runs the step
    script.write_text("\n".join([*body, probe, ""]))
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert result.stdout.strip() == "loaded", result.stderr
