"""Shared fixtures: running the program offline for a stack file."""
from __future__ import annotations

import pytest

from components.plan.stack_files import read_stack_config
from components.plan.stack_plan import run_stack as run_stack_config
from tests.stacks import ROOT


def run_stack_file(path, stack: str = "case"):
    """Run the real program under mocks for a stack file; returns the recorded resources."""
    return run_stack_config(read_stack_config(ROOT, stack, path))


@pytest.fixture
def run_stack():
    return run_stack_file
