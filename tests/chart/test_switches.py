"""Building around all flags on and all off, one flipped at a time, writes what every combination of them writes."""
from __future__ import annotations

import pytest

from components.chart import switches
from components.chart.object_template import ManifestWriter
from components.chart.writer import template_name
from components.cluster.values_contract import values_schema


def _written(explorer: switches.Explorer, objects: list[switches.TemplateObject]) -> dict[str, str]:
    writer = ManifestWriter(explorer.tokens)
    return {template_name(obj): writer.document(obj.tree, obj.guard) for obj in objects}


@pytest.fixture(scope="module")
def both_ways() -> tuple[dict[str, str], dict[str, str], int, int]:
    """The templates and the number of builds, from `objects` and from `every_combination`."""
    explorer = switches.Explorer(values_schema())
    count, build = [0], explorer.build

    def counted(*args):
        count[0] += 1
        return build(*args)

    explorer.build = counted
    few = _written(explorer, explorer.objects())
    few_builds = count[0]
    every = _written(explorer, explorer.every_combination())
    return few, every, few_builds, count[0] - few_builds


def test_the_templates_are_those_of_every_combination_of_the_switches(both_ways):
    few, every, _, _ = both_ways
    assert few == every and len(few) > 20


def test_the_builds_grow_with_the_flags_not_with_their_combinations(both_ways):
    _, _, few_builds, every_builds = both_ways
    assert few_builds * 3 < every_builds


def _explored_with(monkeypatch, extra) -> dict[str, str]:
    real = switches.cluster_objects
    monkeypatch.setattr(switches, "cluster_objects", lambda values: extra(values, real(values)))
    explorer = switches.Explorer(values_schema())
    return _written(explorer, explorer.objects())


def test_an_object_under_two_flags_off_is_found_and_guarded_by_both(monkeypatch):
    def idle(values, objects):
        if not values["exporter"]["enabled"] and not values["validation"]["enabled"]:
            objects.append({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "ascend-idle", "namespace": values["namespace"]}, "data": {}})
        return objects

    written = _explored_with(monkeypatch, idle)
    assert written["templates/idle-configmap.yaml"].startswith(
        "{{- if and (not .Values.exporter.enabled) (not .Values.validation.enabled) }}\n")


def test_content_that_two_flags_decide_together_is_branched_on_both(monkeypatch):
    def annotated(values, objects):
        both = values["exporter"]["enabled"] and values["runtimeClass"]["create"]
        objects[0]["metadata"].setdefault("annotations", {})["example.com/both"] = "yes" if both else "no"
        return objects

    written = _explored_with(monkeypatch, annotated)
    assert ('    {{- if .Values.runtimeClass.create }}\n    {{- if .Values.exporter.enabled }}\n'
            '    example.com/both: "yes"\n    {{- else }}\n    example.com/both: "no"\n    {{- end }}\n'
            '    {{- else }}\n    example.com/both: "no"\n    {{- end }}\n') in written["templates/namespace.yaml"]
