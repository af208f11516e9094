"""Read facts back from a local clone of github.com/Ascend/mind-cluster (MIND_CLUSTER_REPO) at a tag."""
from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

# A clone (bare or not) of github.com/Ascend/mind-cluster with its tags; unset, the source checks skip.
MIRROR = Path(os.environ.get("MIND_CLUSTER_REPO", "/nonexistent"))
HEALTHZ = "component/ascend-common/common-utils/healthz/healthz.go"
CONSTANT = re.compile(r'^\s*(\w+)\s*(?:string\s*)?=\s*"([^"]*)"', re.M)
FLAG = re.compile(r'flag\.(Bool|String|Int|Int64|Uint|Uint64|Duration|Float64)(?:Var)?\(\s*(?:&[\w.\[\]]+\s*,\s*)?'
                  r'([\w."-]+)')
GO_TYPES = {"Bool": "bool", "String": "string", "Int": "int", "Int64": "int64", "Uint": "uint", "Uint64": "uint64",
            "Duration": "duration", "Float64": "float"}
# First argument of a descriptor: a literal, or two literals joined with `+` over a line break.
DESCRIPTOR = re.compile(r'(?:prometheus\.NewDesc|BuildDesc|BuildDescWithLabel)\(\s*"([^"]*)"(?:\s*\+\s*"([^"]*)")?'
                        r'|BuildDescSlice\(\s*&\w+\s*,\s*"([^"]*)"\s*,')


def available() -> bool:
    """Whether the mirror is on this machine (CI clones without it skip the checks that need it)."""
    return (MIRROR / "HEAD").exists() or (MIRROR / ".git").exists()


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(MIRROR), *args], capture_output=True, text=True, check=True).stdout


def commit_of(tag: str) -> str:
    return git("rev-parse", f"{tag}^{{commit}}").strip()


@lru_cache(maxsize=None)
def show(tag: str, path: str) -> str:
    return git("show", f"{tag}:{path}")


def go_files(tag: str, under: str, recursive: bool = True) -> list[str]:
    paths = git("ls-tree", "-r", "--name-only", tag, "--", under).split()
    depth = under.rstrip("/").count("/") + 1
    return [p for p in paths if p.endswith(".go") and not p.endswith("_test.go")
            and (recursive or p.count("/") == depth)]


def constants(tag: str, *unders: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for under in unders:
        for path in go_files(tag, under):
            for name, value in CONSTANT.findall(show(tag, path)):
                found.setdefault(name, value)
    return found


def flags(tag: str, main_dir: str) -> dict[str, str]:
    """Every flag the binary in `main_dir` defines (name: Go type), with the healthz flags it registers."""
    sources = go_files(tag, main_dir, recursive=False)
    if any("healthz.RegisterFlags()" in show(tag, p) for p in sources):
        sources.append(HEALTHZ)
    names = constants(tag, main_dir, "component/ascend-common/api")
    found = {}
    for path in sources:
        for kind, name in FLAG.findall(show(tag, path)):
            found[name.strip('"') if name.startswith('"') else names[name.split(".")[-1]]] = GO_TYPES[kind]
    return found


def literal_metrics(tag: str, collector_dir: str) -> set[str]:
    """Metric names the collectors register with literal names (computed names are not read back)."""
    found = set()
    for path in go_files(tag, collector_dir):
        for head, tail, sliced in DESCRIPTOR.findall(show(tag, path)):
            found.add(sliced or head + tail)
    return found


LABEL_LIST = re.compile(r'\b[cC]ardLabel\w*\s*=\s*\[\]string\{([^}]*)\}')
APPENDED = re.compile(r'append\(\s*(?:\w+\.)?\w*[cC]ardLabel\w*\s*,\s*([^)]*)\)')
REPLACED = re.compile(r'\b\w*[lL]abel\w*\[\d+\]\s*=\s*("\w+"|\w+)')
LITERAL_DESC = re.compile(r'(?:NewDesc|BuildDescWithLabel)\((?:[^()]|\([^()]*\))*?\[\]string\{([^}]*)\}')
NAME = re.compile(r'^"[A-Za-z]\w*"$')


def label_names(tag: str, collector_dir: str) -> set[str]:
    """Label names the collectors give their series: the card labels, what they append or swap in, literal lists."""
    names = constants(tag, collector_dir)
    found: set[str] = set()
    for path in go_files(tag, collector_dir):
        if "/plugins/" in path:
            continue  # the text-file plugin's labels are whatever the user's file names
        text = show(tag, path)
        items = [i for pattern in (LABEL_LIST, APPENDED, LITERAL_DESC) for group in pattern.findall(text)
                 for i in group.split(",")] + REPLACED.findall(text)
        for item in (i.strip() for i in items):
            if NAME.match(item):
                found.add(item.strip('"'))
            elif item.split(".")[-1] in names:
                found.add(names[item.split(".")[-1]])
    return found


def manifest_objects(tag: str, path: str) -> list[dict]:
    """The documents of a YAML manifest at the tag."""
    import yaml
    return [d for d in yaml.safe_load_all(show(tag, path)) if isinstance(d, dict)]
