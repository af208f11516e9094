"""The compatibility matrix and the MindCluster release sets, read from the policy pack that owns them, so both
judge a stack alike."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_PACK_MODEL = Path(__file__).resolve().parents[2] / "policies" / "model"


def _load(module: str) -> ModuleType:
    name = f"ascend_npu_policy_{module}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _PACK_MODEL / f"{module}.py")
        assert spec is not None and spec.loader is not None, f"the pack's model/{module}.py is missing"
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
    return sys.modules[name]


Matrix = _load("compatibility_matrix").Matrix
load_matrix = _load("compatibility_matrix").load_matrix
ReleaseSet = _load("mindcluster_sets").ReleaseSet
load_sets = _load("mindcluster_sets").load_sets
SET_COMPONENTS = _load("mindcluster_sets").WORDS
SET_RULE = _load("mindcluster_sets").RULE
