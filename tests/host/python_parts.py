"""The Python parts of the host scripts, imported here as the node's python3 runs them (modules side by side)."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from components.host.script_set import SCRIPTS


def part(name: str) -> ModuleType:
    """components/host/scripts/NAME.py as a module."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)
