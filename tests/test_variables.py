"""Every variable the project reads is on docs/variables.md: the Makefile's, engine/build.sh's, the workflows'
repository variables and secrets, and the environment the program, the engine and the tests read."""
from __future__ import annotations

import re

import pytest

from tests.stacks import ROOT

PAGE = (ROOT / "docs" / "variables.md").read_text()
# Not the user's to set: the system's own, and what pulumi-command sets for the command it runs.
NOT_SETTINGS = {"PATH", "HOME", "PULUMI_COMMAND_STDOUT", "BASH_SOURCE", "GITHUB_TOKEN"}
ENV_READ = re.compile(r"""(?:environ\.get\(|environ\[|getenv\()["']([A-Z][A-Z0-9_]+)["']""")


def read_by_python() -> set[str]:
    found = set()
    for folder in ("components", "engine", "tests", "testkit", "bench", "policies"):
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(ENV_READ.findall(path.read_text()))
    return found


SOURCES = {
    "Makefile": lambda: set(re.findall(r"^([A-Z_]+) \?=", (ROOT / "Makefile").read_text(), re.MULTILINE)),
    "engine/build.sh": lambda: set(re.findall(r"\$\{([A-Z_]+):-", (ROOT / "engine" / "build.sh").read_text())),
    "host scripts": lambda: {name for path in (ROOT / "components" / "host" / "scripts").glob("*.sh")
                             for name in re.findall(r"\$\{(ASCEND_[A-Z_]+):-", path.read_text())},
    "workflows": lambda: {name for path in (ROOT / ".github" / "workflows").glob("*.yml")
                          for name in re.findall(r"\b(?:vars|secrets)\.([A-Z_]+)", path.read_text())},
    "python": read_by_python,
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_variable_read_is_documented(source):
    names = SOURCES[source]() - NOT_SETTINGS
    assert names, f"{source}: no variable found: the pattern no longer matches"
    assert sorted(name for name in names if f"`{name}`" not in PAGE) == []


def test_the_page_is_linked_from_the_readme():
    assert "(docs/variables.md)" in (ROOT / "README.md").read_text()
