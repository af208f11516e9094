"""One line in the values contract reaches the stack's values, the chart's schema, defaults and values file."""
from __future__ import annotations

import jsonschema
import pytest

from components.chart.values_yaml import parameter_tables, values_yaml
from components.cluster.values_contract import (
    ALL_VALUES,
    CONTRACT,
    SECTIONS,
    Group,
    Value,
    chart_values,
    default_values,
    values_schema,
)
from components.cluster.values_schema import integer


@pytest.fixture
def with_new_setting(monkeypatch):
    """The exporter group with one more value, given its own schema and source (a value no setting names)."""
    new = Value(integer("Seconds the exporter waits for a chip to answer.", 1, 30),
                lambda s: s.validation.timeout_seconds // 120)
    monkeypatch.setitem(ALL_VALUES.fields["exporter"].fields, "chipTimeout", new)
    return new


def leaves(group: Group, path: str = ""):
    for key, setting in group.fields.items():
        if isinstance(setting, Group):
            yield from leaves(setting, f"{path}{key}.")
        else:
            yield f"{path}{key}", setting


def test_a_new_value_reaches_every_place_derived_from_the_contract(with_new_setting, specs):
    schema, defaults = values_schema(), default_values()
    exporter = schema["properties"]["exporter"]
    assert exporter["properties"]["chipTimeout"] == with_new_setting.schema
    assert "chipTimeout" in exporter["required"]
    assert defaults["exporter"]["chipTimeout"] == 5
    stack = chart_values(specs["prod"], managed_by="Helm")
    assert stack["exporter"]["chipTimeout"] == specs["prod"].validation.timeout_seconds // 120
    jsonschema.Draft7Validator(schema).validate(stack)
    text = values_yaml(defaults, schema)
    assert "## @param exporter.chipTimeout Seconds the exporter waits for a chip to answer. From 1 to 30." in text
    assert "| `exporter.chipTimeout` |" in parameter_tables(text)


def test_every_value_has_a_described_schema_and_every_group_a_section():
    for path, setting in leaves(ALL_VALUES):
        assert setting.schema.get("description") or "items" in setting.schema, path
    assert [key for _, keys in SECTIONS for key in keys] == list(ALL_VALUES.fields)
    assert len(SECTIONS) == len(CONTRACT)


@pytest.mark.parametrize("variant", ["prod", "dev", "dev-ascend-default"])
def test_stack_values_and_defaults_have_exactly_the_contracts_keys(specs, variant):
    def keys(values: dict, path: str = "") -> set[str]:
        return {k for key, v in values.items() for k in (keys(v, f"{path}{key}.") if isinstance(v, dict) and
                                                          not key.endswith(("Labels", "Selector")) else
                                                          {f"{path}{key}"})}
    contract = {path for path, _ in leaves(ALL_VALUES)}
    assert keys(chart_values(specs[variant])) == contract
    assert keys(default_values()) == contract
