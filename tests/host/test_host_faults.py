"""Faults injected into the fake node over real SSH: every one held, no byte of the user's engine config lost."""
from __future__ import annotations

import pytest

from testkit import fault_scenarios, guard_scenarios

SCENARIOS = fault_scenarios.SCENARIOS + guard_scenarios.SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_fault_is_held_without_losing_user_config(node, scenario):
    outcome = scenario(node)
    assert outcome.bytes_lost == 0, outcome
    assert outcome.message.startswith("[install]") or outcome.message.startswith("[uninstall]")
