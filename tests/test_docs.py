"""The README and docs/ stay true: links, anchors, make targets, config keys and repo paths all exist."""
from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

from components.config.reference import config_reference
from components.config.stack import CONFIG_KEYS
from tests.e2e.least_privilege import DOCTOR_RULES, DRAIN_RULES, docs_rules

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 220
# Built or installed, never committed: paths under these are not checked.
GENERATED = {"build", "dist", ".venv", ".engine", ".cluster"}
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
CONFIG_KEY = re.compile(r"ascend-npu:([A-Za-z][\w.\[\]<>]*)(:?)")


def name_of(page: Path) -> str:
    """PAGE as a repo path, for messages."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def prose(text: str) -> str:
    """TEXT without its fenced code blocks."""
    return FENCE.sub("", text)


def code(text: str) -> list[str]:
    """Every inline code span and fenced code block of TEXT; a ```text block is output shown, not a command."""
    return [b for b in FENCE.findall(text) if not b.startswith("```text")] + CODE_SPAN.findall(prose(text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of TEXT's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    counts: dict[str, int] = {}
    found = set()
    for line in prose(text).splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            base = slug(match.group(1))
            found.add(f"{base}-{counts[base]}" if base in counts else base)
            counts[base] = counts.get(base, 0) + 1
    return found


def link_problems(page: Path, text: str, root: Path = ROOT) -> list[str]:
    """Relative links of PAGE that name no file inside ROOT, or an anchor that file does not have."""
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(root) or not file.exists():
            problems.append(f"{name_of(page)}: link {target} names no file in the repository")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file.read_text())):
            problems.append(f"{name_of(page)}: link {target}: {file.name} has no heading #{anchor}")
    return problems


def make_targets() -> set[str]:
    """The targets the Makefile defines."""
    return set(re.findall(r"^([A-Za-z][\w.-]*):(?!=)", (ROOT / "Makefile").read_text(), re.M))


def make_mentions(text: str) -> set[str]:
    """Every `make TARGET...` in TEXT's code: variables (`STACK=prod`) and options skipped, a comment ends it."""
    found = set()
    for snippet in code(text):
        for match in re.finditer(r"(?<![\w.-])make[ \t]+([^\n]*)", snippet):
            for word in match.group(1).split():
                if "=" in word or word.startswith("-"):
                    continue
                if not re.fullmatch(r"[a-z][\w-]*", word):
                    break
                found.add(word)
    return found


def config_paths() -> set[str]:
    """Every config key and key path the generated reference documents."""
    rows = re.findall(r"^\| `([^`]+)` \|", config_reference(), re.M)
    return {k.name for k in CONFIG_KEYS} | set(rows)


def key_mentions(text: str) -> set[str]:
    """Every `ascend-npu:<key>` of TEXT, indices written `[]` (type tokens `ascend-npu:index:...` are no keys)."""
    found = set()
    for match in CONFIG_KEY.finditer(text):
        key, colon = match.group(1).rstrip("."), match.group(2)
        if not (key == "index" and colon):
            found.add(re.sub(r"\[\d*\]", "[]", key))
    return found


def expand(path: str) -> list[str]:
    """PATH with `{a,b}` alternatives spelled out and `<placeholders>` as globs."""
    parts = re.split(r"\{([^{}]*)\}", re.sub(r"<[^>]*>", "*", path))
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in product(*choices)]


def path_problems(page: Path, text: str, root: Path = ROOT) -> list[str]:
    """Repo paths in PAGE's inline code (a `/` and a first part that exists at ROOT) that match nothing."""
    problems = []
    for span in CODE_SPAN.findall(prose(text)):
        first = span.split("/", 1)[0]
        if "/" not in span or re.search(r"\s|://", span) or not first or first in GENERATED:
            continue
        if not (root / first).exists():
            continue
        if not all(any(root.glob(p.rstrip("/"))) for p in expand(span)):
            problems.append(f"{name_of(page)}: `{span}` is no path in the repository")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_every_relative_link_names_a_file_and_heading_that_exist(page):
    assert link_problems(page, page.read_text()) == []


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_every_make_target_named_exists(page):
    assert make_mentions(page.read_text()) - make_targets() == set()


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_every_config_key_named_is_a_real_key(page):
    assert key_mentions(page.read_text()) - config_paths() == set()


@pytest.mark.parametrize("page", PAGES, ids=name_of)
def test_every_repo_path_in_code_exists(page):
    assert path_problems(page, page.read_text()) == []


def test_readme_stays_a_short_map_that_links_every_page():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in LINK.findall(text)}
    assert {p for p in PAGES if p != README} - linked == set()


@pytest.mark.parametrize("where", [DRAIN_RULES, DOCTOR_RULES], ids=["drain", "doctor"])
def test_the_rules_the_end_to_end_run_binds_are_on_their_page(where):
    rules = docs_rules(where)
    assert rules and all({"apiGroups", "resources", "verbs"} <= set(rule) for rule in rules)


def test_the_checks_find_what_is_broken(tmp_path):
    """A page with a missing file, a missing heading, an unknown target, key and path is reported on each."""
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n")
    page = tmp_path / "page.md"
    text = ("# Page\n\n[gone](missing.md) [bad](other.md#no-such-heading) [good](other.md#a-section) [here](#page)\n"
            "[out](../../etc/passwd)\n\nRun `make plan`, `make no-such-target` and set `ascend-npu:rollout.noSuchKey`,"
            " `ascend-npu:nodes[0].name`; see `components/no_such_module.py` and `components/config/`.\n")
    page.write_text(text)
    links = link_problems(page, text, root=tmp_path)
    assert len(links) == 3 and "missing.md" in links[0] and "#no-such-heading" in links[1] and "passwd" in links[2]
    assert make_mentions(text) - make_targets() == {"no-such-target"}
    assert key_mentions(text) - config_paths() == {"rollout.noSuchKey"}
    assert path_problems(page, text) == ["page.md: `components/no_such_module.py` is no path in the repository"]
    assert slug("#### `ascend-npu:ssh` (optional)".lstrip("# ")) == "ascend-npussh-optional"
