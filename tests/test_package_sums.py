"""One installer file has one SHA-256: a file listed twice with two sums is refused at plan, naming both entries
(the nodes check each file by its sum, and packages.sha256 of a bundle lists it once)."""
from __future__ import annotations

import copy

import pytest

from components.config import SpecError, parse_stack
from testkit.fakenode.packages import build_packages, stack_config


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    return build_packages(tmp_path_factory.mktemp("packages"))


PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


def refused(raw: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as said:
        parse_stack(raw)
    return {p.field: p.message for p in said.value.problems}


def test_a_file_listed_twice_with_two_sums_is_refused_naming_both_entries(packages):
    raw = stack_config(packages, PIN)
    kept = raw["packages"]["files"][3]
    raw["packages"]["files"].append({**kept, "sha256": "f" * 64})
    problems = refused(raw)
    last = f"packages.files[{len(raw['packages']['files']) - 1}].sha256"
    assert last in problems, problems
    assert f"'{kept['file']}' has another sha256 than packages.files[3]" in problems[last]
    assert "ffffffffffff" in problems[last] and kept["sha256"][:12] in problems[last]


def test_the_same_file_with_the_same_sum_twice_is_no_sum_problem(packages):
    raw = stack_config(packages, PIN)
    raw["packages"]["files"].append(copy.deepcopy(raw["packages"]["files"][3]))
    assert not [field for field in refused(raw) if field.endswith(".sha256")]
