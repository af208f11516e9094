"""`values.schema.json` through the engine: bad values files rejected with a message naming the key, good ones kept."""
from __future__ import annotations

from pathlib import Path

import helm_python
import jsonschema
import pytest

from components.chart.writer import CHART_DIR
from components.cluster.values_contract import default_values, values_schema

from .rendering import RELEASE, as_values_file

BAD_VALUES = sorted((Path(__file__).parent / "bad_values").glob("*.yaml"))


def expectations(path: Path) -> list[str]:
    """The `# expect: ...` lines of a bad values file: text the engine's message must contain."""
    found = [line.split(":", 1)[1].strip() for line in path.read_text().splitlines() if line.startswith("# expect:")]
    assert found, f"{path.name} says nothing about the message it expects"
    return found


def test_the_corpus_is_large_enough():
    assert len(BAD_VALUES) >= 10


@pytest.mark.parametrize("path", BAD_VALUES, ids=lambda p: p.stem)
def test_bad_values_are_refused_by_the_engine_naming_the_key(chart, path):
    values = helm_python.values_from_yaml(path.read_text())
    with pytest.raises(helm_python.HelmValuesError) as validated:
        chart.validate_schema(values)
    with pytest.raises(helm_python.HelmValuesError) as rendered:
        chart.render(values, name=RELEASE)
    for error in (validated.value, rendered.value):
        for expected in expectations(path):
            assert expected in str(error), f"{path.name}: {expected!r} not in:\n{error}"


@pytest.mark.parametrize("path", BAD_VALUES, ids=lambda p: p.stem)
def test_lint_with_bad_values_fails(path):
    report = helm_python.lint(CHART_DIR, helm_python.values_from_yaml(path.read_text()), strict=True)
    assert report["errors"] or any(m["severity"] == 3 for m in report["messages"]), report


@pytest.mark.parametrize("values", ["defaults", "dev", "prod", "prod-exporter-off", "prod-operator-off",
                                   "dev-operator-on", "dev-dashboard-sa", "dev-ascend-default",
                                   "prod-volcano-digest"])
def test_every_stacks_values_are_accepted(chart, stack_values, values):
    chart.validate_schema(as_values_file(stack_values[values]))
    jsonschema.Draft7Validator(values_schema()).validate(stack_values[values])


def test_values_yaml_is_the_contracts_defaults_and_passes_its_schema(chart):
    assert chart.values == default_values()
    chart.validate_schema({})


def test_the_committed_schema_is_the_contract(chart):
    assert chart.schema == values_schema()
