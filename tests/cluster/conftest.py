"""Fixtures: every stack variant's spec, chart values and cluster objects, built once per run."""
from __future__ import annotations

from typing import Any

import pytest

from components.cluster.all_objects import cluster_objects
from components.cluster.values_contract import chart_values
from components.config import StackSpec

from .stacks import VARIANTS, spec_of


@pytest.fixture(scope="session")
def specs() -> dict[str, StackSpec]:
    """Every variant's validated spec."""
    return {name: spec_of(build()) for name, build in VARIANTS.items()}


@pytest.fixture(scope="session")
def values(specs) -> dict[str, dict[str, Any]]:
    """Every variant's chart values."""
    return {name: chart_values(spec) for name, spec in specs.items()}


@pytest.fixture(scope="session")
def objects(values) -> dict[str, list[dict[str, Any]]]:
    """Every variant's cluster objects."""
    return {name: cluster_objects(v) for name, v in values.items()}
