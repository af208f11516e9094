"""Shared fixtures: running the program offline for a stack file."""
from __future__ import annotations

import pytest

from components.plan.recorder import run_program
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT


def run_stack_file(path, stack: str = "case"):
    """Run the real program under mocks for a stack file; returns the recorded resources."""
    config = read_stack_config(ROOT, stack, path)
    return run_program(ROOT / "__main__.py", config.project, stack, config.values, config.secret_keys)


@pytest.fixture
def run_stack():
    return run_stack_file
