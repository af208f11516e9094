"""Every bad config in tests/bad_configs is refused with the expected fields named, and no traceback."""
from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pytest
import yaml

from components.plan.__main__ import EXIT_CONFIG, plan
from components.spec import SpecError
from tests.conftest import run_stack_file
from tests.stacks import ROOT, load_stack, patched, write_stack

CASES = sorted((Path(__file__).parent / "bad_configs").glob("*.yaml"))
PLAINTEXT_KEY_MARK = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"


def expected_fields(case: Path) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in case.read_text().splitlines() if line.startswith("# expect:")]


def stack_file(case: Path, tmp_path: Path) -> Path:
    patch = yaml.safe_load(case.read_text())
    return write_stack(patched(load_stack(patch.get("base", "dev")), patch), tmp_path)


def test_corpus_is_large_enough():
    assert len(CASES) >= 25
    assert sum(len(expected_fields(c)) > 1 for c in CASES) >= 3


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_bad_config_names_each_field(case: Path, tmp_path: Path):
    with pytest.raises(SpecError) as caught:
        run_stack_file(stack_file(case, tmp_path))
    fields = {p.field for p in caught.value.problems}
    for field in expected_fields(case):
        assert field in fields, f"{case.name}: {field} not among {sorted(fields)}"
    assert len(fields) == len(expected_fields(case)), f"{case.name}: unexpected extra problems {sorted(fields)}"
    for problem in caught.value.problems:
        assert len(problem.message) > 20, "each message says what to write instead"
    assert PLAINTEXT_KEY_MARK not in str(caught.value)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_plan_exits_2_without_traceback(case: Path, tmp_path: Path):
    err = io.StringIO()
    with redirect_stderr(err):
        code = plan("case", tmp_path / "out", stack_file(case, tmp_path), quiet=True)
    assert code == EXIT_CONFIG
    text = err.getvalue()
    assert "Traceback" not in text
    for field in expected_fields(case):
        assert f"ascend-npu:{field}:" in text
    assert not (tmp_path / "out").exists(), "nothing is written for a bad config"


def test_make_plan_process_reports_bad_config(tmp_path: Path):
    case = Path(__file__).parent / "bad_configs" / "several-problems.yaml"
    result = subprocess.run([sys.executable, "-m", "components.plan", "--stack", "case", "--stack-file",
                             str(stack_file(case, tmp_path)), "--out", str(tmp_path / "out")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == EXIT_CONFIG
    assert "Traceback" not in result.stderr
    assert "5 problem(s)" in result.stderr
