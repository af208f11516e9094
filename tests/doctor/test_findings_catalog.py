"""Every finding id has its page and its fixtures, every page and fixture folder belongs to an id, and each fixture
is judged as its name says: `fail-*` reports the id, `pass-*` does not."""
from __future__ import annotations

import re

import pytest

from components.doctor.checks import discover
from components.doctor.findings import SEVERITIES
from tests.doctor.fixture_cases import FIXTURES, fixtures, load, run
from tests.stacks import ROOT
from tests.test_docs import link_problems, path_problems

KINDS = discover()
PAGES = ROOT / "docs" / "doctor"
SECTIONS = ["What it means", "Why it matters", "Fix", "Checked by"]
ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {heading.strip(): body.strip() for heading, body in zip(parts[1::2], parts[2::2])}


def test_every_id_has_a_page_and_every_page_an_id():
    pages = {p.stem for p in PAGES.glob("*.md")} - {"README"}
    assert sorted(set(KINDS) - pages) == [], "ids without a page"
    assert sorted(pages - set(KINDS)) == [], "pages of no id"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_page_names_its_id_severity_and_fix(kind):
    text = (PAGES / f"{kind}.md").read_text()
    found = sections(text)
    assert text.startswith(f"# `{kind}`\n"), "the page's title is its id"
    assert [s for s in SECTIONS if not found.get(s)] == [], "empty or missing sections"
    assert f"Severity: **{KINDS[kind].severity}**" in text
    assert KINDS[kind].title.lower() in " ".join(text.split()).lower()
    assert ID.match(kind) and KINDS[kind].severity in SEVERITIES


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_id_has_a_failing_and_a_passing_fixture_named_on_its_page(kind):
    names = sorted(p.name for p in (FIXTURES / kind).glob("*.yaml"))
    assert any(n.startswith("fail-") for n in names) and any(n.startswith("pass-") for n in names), names
    page = (PAGES / f"{kind}.md").read_text()
    assert f"tests/doctor/fixtures/{kind}/" in page


def test_the_pages_link_and_name_only_what_exists():
    problems = []
    for page in sorted(PAGES.glob("*.md")):
        problems += link_problems(page, page.read_text()) + path_problems(page, page.read_text())
    assert problems == []


def test_the_index_lists_every_id():
    index = (PAGES / "README.md").read_text()
    assert [k for k in sorted(KINDS) if f"[`{k}`]({k}.md)" not in index] == []


def test_every_fixture_folder_is_an_id():
    assert sorted({p.parent.name for p in fixtures()} - set(KINDS)) == []


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(path, tmp_path, monkeypatch):
    found = run(load(path), tmp_path, monkeypatch)
    ids = [f.id for f in found]
    if path.name.startswith("fail-"):
        assert path.parent.name in ids, found
        assert all(f.severity == KINDS[path.parent.name].severity for f in found if f.id == path.parent.name)
    else:
        assert path.parent.name not in ids, found
