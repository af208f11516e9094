"""The compatibility matrix, read from the policy pack that owns it, so both judge a stack alike."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PACK_MODULE = Path(__file__).resolve().parents[2] / "policies" / "model" / "compatibility_matrix.py"


def _load():
    name = "ascend_npu_policy_matrix"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _PACK_MODULE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


Matrix = _load().Matrix
load_matrix = _load().load_matrix
