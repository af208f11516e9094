"""The host scripts as files: shellcheck clean, and each one readable on its own."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from components.doctor.remote import PROBE
from components.host.script_set import SCRIPTS, STEP_PARTS
from components.runner.on_node import NODE, RUNNERS


def test_shellcheck_reports_nothing():
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (apt-get install -y shellcheck)")
    scripts = sorted(p.name for p in SCRIPTS.glob("*.sh"))
    result = subprocess.run(["shellcheck", "-x", *scripts], cwd=SCRIPTS, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    # The doctor's probe (read-only), and the runners each step's command inlines (components/runner/node).
    others = [str(PROBE), *(str(NODE / f"{runner}.sh") for runner in RUNNERS)]
    checked = subprocess.run(["shellcheck", *others], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_script_is_used_by_a_step_and_every_part_exists():
    used = {part for parts in STEP_PARTS.values() for part in parts}
    assert used == {p.name for p in SCRIPTS.glob("*.sh")}
    assert {p.stem for p in NODE.glob("*.sh")} == set(RUNNERS)


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
