"""The host layer's node side: shell scripts for Ascend nodes and the commands that run them over SSH."""
from __future__ import annotations

import importlib
from typing import Any

# Loaded when first asked for: a stored line of an earlier release (`python -m components.host.node_step`, one
# process per step and node) imports this package and needs none of these, nor the config model they load (about
# 0.25 s of CPU a step).
_FROM = {"DEFAULT_STAGING": "commands", "HostStep": "commands", "host_steps": "commands",
         "mirror_login_stdin": "commands", "node_packages": "commands", "script_text": "script_set"}
__all__ = sorted(_FROM)


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_FROM[name]}"), name)
