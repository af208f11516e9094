"""The chart's files from the builders and the values contract; written, compared or packaged."""
from __future__ import annotations

import json
from pathlib import Path

from components.chart.object_template import ManifestWriter
from components.chart.placeholder_values import STRING_TOKEN
from components.chart.switches import Explorer, TemplateObject
from components.chart.text_files import CHART_NAME, chart_yaml, helmignore, notes_txt, readme
from components.chart.values_yaml import values_yaml
from components.cluster.values_contract import default_values, values_schema

ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = ROOT / "charts" / CHART_NAME
DIST_DIR = ROOT / "dist"
HELPERS = Path(__file__).resolve().parent / "templates" / "_helpers.tpl"
NAME_PREFIXES = ("ascend-npu-", "ascend-", "npu-")


def template_name(obj: TemplateObject) -> str:
    """`device-plugin-910b-daemonset.yaml`: the object's fixed name without the project prefix, then its kind."""
    stem = STRING_TOKEN.sub("", obj.tree["metadata"]["name"]).strip("-")
    for prefix in NAME_PREFIXES:
        if stem.startswith(prefix):
            stem = stem[len(prefix):]
            break
    kind = obj.tree["kind"].lower()
    return f"templates/{stem}-{kind}.yaml" if stem else f"templates/{kind}.yaml"


def template_files() -> dict[str, str]:
    """One template per object the builders can produce, guarded by the switches it depends on."""
    explorer = Explorer(values_schema())
    writer = ManifestWriter(explorer.tokens)
    files: dict[str, str] = {}
    for obj in explorer.objects():
        name = template_name(obj)
        if name in files:
            raise ValueError(f"two objects would be written to {name}")
        files[name] = writer.document(obj.tree, obj.guard)
    leftover = {name: explorer.tokens.leftovers(text) for name, text in files.items()}
    problems = [f"{name}: {', '.join(e.pipeline for e in exprs)}" for name, exprs in leftover.items() if exprs]
    if problems:
        raise ValueError("a builder changed a placeholder value before the chart could see it (formatted, padded "
                         "or split it; see components/chart/README.md); placeholders left in "
                         + "; ".join(problems))
    return dict(sorted(files.items()))


def chart_files() -> dict[str, str]:
    """Every file of the chart, by path relative to the chart directory."""
    schema, defaults = values_schema(), default_values()
    values_text = values_yaml(defaults, schema)
    return {
        ".helmignore": helmignore(),
        "Chart.yaml": chart_yaml(),
        "README.md": readme(values_text),
        "values.yaml": values_text,
        "values.schema.json": json.dumps(schema, indent=2) + "\n",
        "templates/_helpers.tpl": HELPERS.read_text(),
        "templates/NOTES.txt": notes_txt(),
        **template_files(),
    }


def write_chart(directory: Path = CHART_DIR) -> list[Path]:
    """Write the chart into `directory`, removing files the generator no longer makes."""
    files = chart_files()
    if directory.exists():
        for stale in sorted(p for p in directory.rglob("*") if p.is_file()):
            if stale.relative_to(directory).as_posix() not in files:
                stale.unlink()
    written = []
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written


def drift(directory: Path = CHART_DIR) -> list[str]:
    """Files of `directory` that differ from, lack or add to what the generator makes."""
    files = chart_files()
    present = {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()} \
        if directory.exists() else set()
    problems = [f"missing {n}" for n in files if n not in present]
    problems += [f"not generated {n}" for n in sorted(present - set(files))]
    problems += [f"differs {n}" for n in files if n in present and (directory / n).read_text() != files[n]]
    return problems


def package_chart(directory: Path = CHART_DIR, destination: Path = DIST_DIR) -> Path:
    """`dist/ascend-npu-<version>.tgz`, packaged by the Helm engine."""
    import helm_python  # a dev dependency, needed only to package

    destination.mkdir(parents=True, exist_ok=True)
    return Path(helm_python.package(directory, destination=destination))
