"""The chart rendered by the Helm engine passes only flags the pinned releases define, for every stack."""
from __future__ import annotations

import pytest

from tests.release_checks import flags_passed, undefined_flags

from .rendering import as_values_file, render


@pytest.mark.parametrize("variant", ["dev", "prod", "dev-plugin-v26", "dev-exporter-v26", "prod-volcano-digest"])
def test_rendered_chart_passes_only_defined_flags(chart, stack_values, variant):
    values = stack_values[variant]
    rendered = list(render(chart, as_values_file(values)).values())
    assert flags_passed(rendered) >= 3
    assert undefined_flags(rendered, values) == []


def test_chart_defaults_pass_only_defined_flags(chart, stack_values):
    rendered = list(render(chart, {}).values())
    assert undefined_flags(rendered, stack_values["defaults"]) == []
