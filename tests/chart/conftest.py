"""Fixtures: the committed chart loaded by the Helm engine, and every stack variant's values."""
from __future__ import annotations

from typing import Any

import helm_python
import pytest

from components.chart.writer import CHART_DIR
from components.cluster.values_contract import chart_values, default_values

from ..cluster.stacks import VARIANTS, spec_of


@pytest.fixture(scope="session")
def chart() -> helm_python.Chart:
    """The chart as committed in charts/ascend-npu (test_generated proves it is what the generator makes)."""
    with helm_python.Chart.load(CHART_DIR) as loaded:
        yield loaded


@pytest.fixture(scope="session")
def stack_values() -> dict[str, dict[str, Any]]:
    """`chart_values(spec)` of every stack variant, and the chart's defaults."""
    return {"defaults": default_values(), **{name: chart_values(spec_of(build())) for name, build in VARIANTS.items()}}
