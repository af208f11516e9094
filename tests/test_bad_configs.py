"""Every bad config in tests/bad_configs is refused with its fields named, no traceback and no secret shown;
every file in tests/bad_configs/accepted is planned.

Two kinds of case: a patch (`set`/`unset`/`delete` over a committed stack, written back as YAML) and, under
`files/`, a whole stack file read byte for byte (for what only raw YAML can say: duplicate keys, aliases,
unquoted scalars). Header lines: `# expect: <field>` (a field the output names), `# expect-text: <text>` (for
problems of the file as a whole), `# secret: <text>` (must never be printed).
"""
from __future__ import annotations

import io
import re
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pulumi
import pytest
import yaml

from components.config import SpecError
from components.config.base import DNS_SUBDOMAIN
from components.config.redact import KEY_MATERIAL
from components.plan.stack_plan import EXIT_CONFIG, EXIT_OK, plan
from tests.conftest import run_stack_file
from tests.stacks import ROOT, load_stack, patched, write_stack

HERE = Path(__file__).parent / "bad_configs"
PATCHES = sorted(HERE.glob("*.yaml"))
FILES = sorted((HERE / "files").glob("*.yaml"))
ACCEPTED = sorted((HERE / "accepted").glob("*.yaml"))
PLAINTEXT_KEY_MARK = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
MAX_OUTPUT = 8000
REGEX_MARKS = ("[a-z", "]*$", "(?:", "{0,", "^[")
NODE_NAMED = re.compile(r"(nodes\[\d+\]) \([^)]*\)")  # `nodes[2] (infer-01)`: a node and its name


def header(case: Path, name: str) -> list[str]:
    prefix = f"# {name}:"
    return [line[len(prefix):].strip() for line in case.read_text(errors="replace").splitlines()
            if line.startswith(prefix)]


def expected_fields(case: Path) -> list[str]:
    return header(case, "expect")


def secrets_of(case: Path) -> list[str]:
    """What must never be printed: the declared secrets and every run of key material in the file."""
    text = case.read_text(errors="replace")
    found = header(case, "secret") + [PLAINTEXT_KEY_MARK]
    for line in text.splitlines():
        if KEY_MATERIAL.search(line) and not line.startswith("#"):
            found += [run for run in re.findall(r"[0-9A-Za-z+/=:]{24,}", line)]
    return found


def stack_file(case: Path, tmp_path: Path) -> Path:
    """The stack file a case stands for, in tmp_path."""
    if case.parent.name == "files" or re.search(r"^config:", case.read_text(errors="replace"), re.M):
        path = tmp_path / "Pulumi.case.yaml"
        path.write_bytes(case.read_bytes())
        return path
    patch = yaml.safe_load(case.read_text())
    return write_stack(patched(load_stack(patch.get("base", "dev")), patch), tmp_path)


def unnamed_nodes(text: str, path: Path) -> list[str]:
    """The `nodes[i]` a problem shows without the node's name, though the node has a valid one."""
    if "nodes[" not in text:
        return []  # also a file YAML cannot load (an alias bomb, a Python tag) mentions no node
    nodes = (yaml.safe_load(path.read_text()).get("config") or {}).get("ascend-npu:nodes")
    names = {i: n["name"] for i, n in enumerate(nodes if isinstance(nodes, list) else [])
             if isinstance(n, dict) and isinstance(n.get("name"), str) and re.fullmatch(DNS_SUBDOMAIN, n["name"])}
    return [m[0] for m in re.finditer(r"nodes\[(\d+)\]( \(([^)]*)\))?", text)
            if int(m[1]) in names and m[3] != names[int(m[1])]]


def plan_output(case: Path, tmp_path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = plan("case", tmp_path / "out", stack_file(case, tmp_path), quiet=True)
    return code, err.getvalue()


def test_corpus_is_large_enough():
    assert len(PATCHES) + len(FILES) >= 70
    assert len(FILES) >= 20 and len(ACCEPTED) >= 8
    assert sum(len(expected_fields(c)) > 1 for c in PATCHES) >= 3
    assert all(expected_fields(c) or header(c, "expect-text") for c in PATCHES + FILES)


@pytest.mark.parametrize("case", PATCHES, ids=lambda p: p.stem)
def test_bad_config_names_each_field_and_nothing_else(case: Path, tmp_path: Path):
    with pytest.raises(SpecError) as caught:
        run_stack_file(stack_file(case, tmp_path))
    assert isinstance(caught.value, pulumi.RunError), "the engine prints the problems without a traceback"
    fields = {p.field for p in caught.value.problems}
    for field in expected_fields(case):
        assert field in fields, f"{case.name}: {field} not among {sorted(fields)}"
    assert len(fields) == len(expected_fields(case)), f"{case.name}: unexpected extra problems {sorted(fields)}"
    for problem in caught.value.problems:
        assert len(problem.message) > 20, "each message says what to write instead"


@pytest.mark.parametrize("case", PATCHES + FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_plan_exits_2_naming_the_fields_without_traceback_or_secret(case: Path, tmp_path: Path):
    code, text = plan_output(case, tmp_path)
    assert code == EXIT_CONFIG, text
    assert "Traceback" not in text and len(text) < MAX_OUTPUT
    for field in expected_fields(case):
        assert f"ascend-npu:{field}:" in NODE_NAMED.sub(r"\1", text), f"{case.name}: {field} not named in\n{text}"
    assert not unnamed_nodes(text, stack_file(case, tmp_path)), f"{case.name}: a node shown without its name\n{text}"
    for phrase in header(case, "expect-text"):
        assert phrase in text, f"{case.name}: '{phrase}' not in\n{text}"
    for secret in secrets_of(case):
        assert secret not in text, f"{case.name}: a secret is printed"
    assert not any(mark in text for mark in REGEX_MARKS), f"{case.name}: a raw pattern is printed\n{text}"
    assert not (tmp_path / "out").exists(), "nothing is written for a bad config"


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda p: p.stem)
def test_unusual_but_good_stack_is_planned(case: Path, tmp_path: Path):
    code, text = plan_output(case, tmp_path)
    assert code == EXIT_OK, text
    for check in header(case, "check"):
        path, _, wanted = check.partition(" == ")
        value = yaml.safe_load((tmp_path / "out" / "chart-values.yaml").read_text())
        for step in path.split("."):
            value = value[int(step)] if isinstance(value, list) else value[step]
        assert str(value) == wanted, f"{case.name}: {path} is {value!r}, not {wanted}"


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path):
    path = tmp_path / "Pulumi.case.yaml"
    path.write_text("config:\n  ascend-npu:cluster: {name: a}\n" + "# padding\n" * 120_000)
    err = io.StringIO()
    with redirect_stderr(err):
        assert plan("case", tmp_path / "out", path, quiet=True) == EXIT_CONFIG
    assert "bytes" in err.getvalue() and "Traceback" not in err.getvalue()


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path):
    path = tmp_path / "Pulumi.case.yaml"
    path.write_bytes(b"config:\n  ascend-npu:cluster:\n    name: caf\xe9\n")
    err = io.StringIO()
    with redirect_stderr(err):
        assert plan("case", tmp_path / "out", path, quiet=True) == EXIT_CONFIG
    assert "UTF-8" in err.getvalue()


def test_make_plan_process_reports_bad_config(tmp_path: Path):
    case = HERE / "several-problems.yaml"
    result = subprocess.run([sys.executable, "-m", "components.plan", "--stack", "case", "--stack-file",
                             str(stack_file(case, tmp_path)), "--out", str(tmp_path / "out")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == EXIT_CONFIG
    assert "Traceback" not in result.stderr
    assert "5 problem(s)" in result.stderr


def test_output_is_bounded_when_every_node_is_wrong(tmp_path: Path):
    stack = load_stack("dev")
    node = stack["config"]["ascend-npu:nodes"][0]
    stack["config"]["ascend-npu:nodes"] = [{**node, "name": f"N{i}", "address": f"10.1.{i // 250}.{i % 250}"}
                                          for i in range(500)]
    stack["config"]["ascend-npu:rollout"] = {"canaries": ["N0"]}
    err = io.StringIO()
    with redirect_stderr(err):
        assert plan("case", tmp_path / "out", write_stack(stack, tmp_path), quiet=True) == EXIT_CONFIG
    assert "500 problem(s)" in err.getvalue() and "and 460 more" in err.getvalue()
    assert len(err.getvalue().splitlines()) < 50
