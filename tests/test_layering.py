"""Who may import whom: the layers meet only in the platform, tools never lean on tests, the pack stands alone."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.stacks import ROOT

# (modules under this folder, import prefixes they must never use, why)
RULES = [
    ("components/host", ("components.cluster", "components.chart", "components.plan"),
     "the host layer knows nothing of Kubernetes; the platform wires the layers"),
    ("components/cluster", ("components.host", "components.chart", "components.plan"),
     "the cluster layer knows nothing of SSH; the chart generator reads the builders, not the other way"),
    ("components/config", ("components.host", "components.cluster", "components.chart", "components.plan",
                           "components.platform"), "the config model is read by every layer and reads none"),
    ("components/releases", ("components.host", "components.cluster", "components.chart", "components.config"),
     "the release catalog is plain facts"),
    ("components/drain", ("components.host", "components.cluster", "components.config", "components.chart",
                          "components.plan", "components.doctor", "pulumi", "pulumi_kubernetes", "pulumi_command"),
     "the drain runs as a local command on its own: the API client and the standard library, no Pulumi SDK"),
    ("components/labels", ("components.host", "components.cluster", "components.config", "components.chart",
                           "components.plan", "components.doctor", "pulumi", "pulumi_kubernetes", "pulumi_command"),
     "the label step runs as a local command on its own: the API client and the standard library, no Pulumi SDK"),
    ("components/kubeapi", ("components.host", "components.cluster", "components.config", "components.chart",
                            "components.plan", "components.drain", "components.doctor", "pulumi"),
     "the kubeconfig reader and REST client know no layer"),
    ("components", ("tests", "testkit", "bench", "engine"), "the program never ships test, bench or engine code"),
    ("testkit", ("tests", "bench"), "tools import testkit; testkit imports no test module"),
    ("bench", ("tests",), "the bench uses testkit, never tests"),
    ("policies", ("components", "tests", "testkit"), "the pack runs on its own, in its own virtualenv"),
]


def imported(path: Path, root: Path) -> set[str]:
    """Every module an `import` or `from ... import` in the file names (relative imports resolved)."""
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            names.add(".".join(part for part in (base, node.module or "") if part))
    return names


def offenders(folder: str, banned: tuple[str, ...], root: Path = ROOT) -> list[str]:
    return sorted(f"{path.relative_to(root)} imports {name}" for path in (root / folder).rglob("*.py")
                  for name in imported(path, root) if any(name == b or name.startswith(b + ".") for b in banned))


@pytest.mark.parametrize("folder, banned, why", RULES, ids=[r[0] for r in RULES])
def test_layers_import_only_what_they_may(folder, banned, why):
    assert offenders(folder, banned) == [], why


def test_the_check_sees_forbidden_imports_in_every_form(tmp_path):
    host = tmp_path / "components" / "host"
    host.mkdir(parents=True)
    (host / "probe.py").write_text("import components.cluster\nfrom ..cluster.common import metadata\n"
                                   "def late():\n    from components.chart.writer import write_chart\n")
    assert offenders("components/host", ("components.cluster", "components.chart"), tmp_path) == [
        "components/host/probe.py imports components.chart.writer",
        "components/host/probe.py imports components.cluster",
        "components/host/probe.py imports components.cluster.common"]
