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
    ("components/runner", ("components.host", "components.cluster", "components.config", "components.chart",
                           "components.plan", "components.doctor", "components.releases", "components.drain",
                           "components.labels", "components.kubeapi", "pulumi", "pulumi_kubernetes", "pulumi_command",
                           "pydantic", "yaml", "grpc"),
     "the host runner runs as a local command, one process per step and node: the standard library alone"),
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


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_cycles(folder: str, root: Path = ROOT) -> list[list[str]]:
    """The groups of FOLDER's modules that import one another round in a circle, by any import, at the top of a
    module or inside a function (an import deferred to break a circle keeps the circle)."""
    modules = {module_name(path, root): path for path in (root / folder).rglob("*.py")}

    def imports(path: Path) -> set[str]:
        """imported(), and `from PACKAGE import MODULE` as MODULE."""
        names = imported(path, root)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
        return names

    graph = {name: {found for found in imports(path) if found in modules and found != name}
             for name, path in modules.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(name: str) -> None:  # Tarjan's strongly connected components
        order[name] = low[name] = len(order)
        stack.append(name)
        for other in graph[name]:
            if other not in order:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], order[other])
        if low[name] == order[name]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for name in sorted(graph):
        if name not in order:
            visit(name)
    return cycles


def test_no_module_of_the_program_imports_itself_round_a_circle():
    """catalog_facts -> commands -> script_set -> catalog_facts was held only by an import deferred into a function."""
    assert import_cycles("components") == []


def test_the_cycle_check_sees_a_circle_closed_inside_a_function(tmp_path):
    host = tmp_path / "components" / "host"
    host.mkdir(parents=True)
    (host / "a.py").write_text("from components.host.b import x\n")
    (host / "b.py").write_text("def late():\n    from components.host import a\n")
    (host / "c.py").write_text("import components.host.a\n")
    assert import_cycles("components", tmp_path) == [["components.host.a", "components.host.b"]]
