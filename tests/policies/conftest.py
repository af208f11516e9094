"""The real policy pack, started as the Pulumi CLI starts it, shared by the policy tests."""
from __future__ import annotations

import pytest

from components.plan.analyzer import PolicyPackProcess
from tests.stacks import ROOT


@pytest.fixture(scope="session")
def pack():
    with PolicyPackProcess(ROOT / "policies") as running:
        yield running
