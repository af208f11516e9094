"""The real policy pack, started as the Pulumi CLI starts it, and its modules, shared by the policy tests."""
from __future__ import annotations

import importlib
import sys

import pytest

from components.plan.analyzer import PolicyPackProcess
from components.plan.pack_runtime import pack_python
from tests.stacks import ROOT


@pytest.fixture(scope="session")
def pack():
    """The pack run by the interpreter of the virtualenv its PulumiPolicy.yaml names (policies/venv, from make)."""
    with PolicyPackProcess(ROOT / "policies", python=pack_python(ROOT / "policies")) as running:
        yield running


@pytest.fixture(scope="session")
def pack_module():
    """Import a module of the pack the way the pack does (its folder on sys.path, `rules` and `model` top-level)."""
    sys.path.insert(0, str(ROOT / "policies"))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(ROOT / "policies"))
