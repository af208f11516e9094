"""A builder that changes a placeholder value (pads, slices, does arithmetic) makes `make chart` fail loudly."""
from __future__ import annotations

import pytest

from components.chart import switches
from components.chart.writer import template_files


def _with_annotation(monkeypatch, make_value):
    """Let the builders run as usual, then add one annotation computed from the values to the first object."""
    real = switches.cluster_objects

    def builders(values):
        objects = real(values)
        meta = objects[0]["metadata"]
        meta["annotations"] = {**meta.get("annotations", {}), "example.com/derived": make_value(values)}
        return objects

    monkeypatch.setattr(switches, "cluster_objects", builders)


@pytest.mark.parametrize("make_value, expression", [
    (lambda v: f"{v['exporter']['port']:07d}", ".Values.exporter.port"),
    (lambda v: f"port-{v['exporter']['port']}0", ".Values.exporter.port"),
    (lambda v: v["namespace"].upper(), ".Values.namespace"),
    (lambda v: v["namespace"][1:], ".Values.namespace"),
])
def test_a_changed_placeholder_is_refused_naming_the_value(monkeypatch, make_value, expression):
    _with_annotation(monkeypatch, make_value)
    with pytest.raises(ValueError, match="placeholders left in") as refused:
        template_files()
    assert expression in str(refused.value)


def test_a_placeholder_used_as_it_is_becomes_a_template_action(monkeypatch):
    _with_annotation(monkeypatch, lambda v: f"port-{v['exporter']['port']}")
    first = next(iter(t for t in template_files().values() if "example.com/derived" in t))
    assert 'example.com/derived: "port-{{ .Values.exporter.port | toJson }}"' in first
