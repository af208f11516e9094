"""The pack runs with the interpreter PulumiPolicy.yaml names, as the CLI runs it; a missing or broken one is named,
with its fix, by `make plan` before any `pulumi preview --policy-pack` can wait on it."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from components.plan.analyzer import PolicyPackError
from components.plan.pack_runtime import pack_python
from components.plan.stack_plan import plan
from tests.stacks import ROOT


def test_the_repositorys_pack_runs_with_policies_venv_which_make_venv_links_to_dotvenv():
    assert pack_python(ROOT / "policies") == str(ROOT / "policies" / "venv" / "bin" / "python")
    assert (ROOT / "policies" / "venv").resolve() == (ROOT / ".venv").resolve()
    recipe = subprocess.run(["make", "-n", "-B", "venv"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "ln -sfn ../.venv policies/venv" in recipe, recipe
    assert "policies/venv" in (ROOT / ".gitignore").read_text().split()


def pack_copy(tmp_path: Path, manifest: str | None = None) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(ROOT / "policies", folder, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    if manifest is not None:
        (folder / "PulumiPolicy.yaml").write_text(manifest)
    return folder


def test_a_missing_virtualenv_is_named_with_the_command_that_makes_it(tmp_path):
    folder = pack_copy(tmp_path)
    with pytest.raises(PolicyPackError) as err:
        pack_python(folder)
    assert "runs the pack in the virtualenv `venv`" in str(err.value) and "does not exist" in str(err.value)
    assert f"python3 -m venv {folder / 'venv'} && {folder / 'venv'}/bin/pip install -r {folder}/requirements.txt" \
        in str(err.value)


def test_a_virtualenv_without_the_packs_requirements_is_named(tmp_path):
    folder = pack_copy(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    with pytest.raises(PolicyPackError, match=r"cannot load the pack's requirements \(ModuleNotFoundError: No module "
                                              r"named 'pulumi_policy'\)"):
        pack_python(folder)


def test_a_virtualenv_whose_python_is_gone_is_named(tmp_path):
    folder = pack_copy(tmp_path)
    (folder / "venv" / "bin").mkdir(parents=True)
    (folder / "venv" / "bin" / "python").symlink_to(tmp_path / "python3.99")  # its interpreter was removed
    with pytest.raises(PolicyPackError, match="whose python does not start"):
        pack_python(folder)


def test_an_absolute_virtualenv_is_taken_as_it_is(tmp_path):
    folder = pack_copy(tmp_path, f"runtime:\n  name: python\n  options:\n    virtualenv: {ROOT / '.venv'}\n")
    assert pack_python(folder) == str(ROOT / ".venv" / "bin" / "python")


def test_make_plan_names_the_fix_before_the_cli_could_hang(tmp_path, capsys):
    folder = pack_copy(tmp_path)
    assert plan("dev", tmp_path / "out", pack_dir=folder, quiet=True) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "would wait for ever at \"Loading policy packs\"" in err, err
    assert "Traceback" not in err
