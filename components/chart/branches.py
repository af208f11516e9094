"""Branches: two trees as one, with the parts that differ under a condition."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Branch:
    """Map entries or list items that exist only when `condition` holds, else the `otherwise` ones."""

    condition: str
    then: Any
    otherwise: Any


@dataclass(frozen=True)
class BranchKey:
    """The dict key a Branch of map entries sits under."""

    condition: str
    fingerprint: str


def merge_pair(off: Any, on: Any, condition: str) -> Any:
    """`off` and `on` as one tree; differences become Branches on `condition`."""
    if off == on:
        return off
    if isinstance(off, dict) and isinstance(on, dict):
        return merge_maps(off, on, condition)
    if isinstance(off, list) and isinstance(on, list):
        return merge_lists(off, on, condition)
    raise ValueError("no common structure")


def _branch_entries(then: dict[Any, Any], otherwise: dict[Any, Any], condition: str) -> dict[Any, Any]:
    branch = Branch(condition, then, otherwise)
    return {BranchKey(condition, repr(branch)): branch}


def merge_maps(off: dict[Any, Any], on: dict[Any, Any], condition: str) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    off_keys, on_keys = list(off), list(on)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, off_keys, on_keys, autojunk=False).get_opcodes():
        if op != "equal":
            merged.update(_branch_entries({k: on[k] for k in on_keys[j1:j2]}, {k: off[k] for k in off_keys[i1:i2]},
                                          condition))
            continue
        for key in off_keys[i1:i2]:
            try:
                merged[key] = merge_pair(off[key], on[key], condition)
            except ValueError:
                merged.update(_branch_entries({key: on[key]}, {key: off[key]}, condition))
    return merged


def merge_lists(off: list[Any], on: list[Any], condition: str) -> list[Any]:
    merged: list[Any] = []
    matcher = difflib.SequenceMatcher(None, [repr(i) for i in off], [repr(i) for i in on], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            merged += off[i1:i2]
            continue
        if op == "replace" and i2 - i1 == j2 - j1 and all(isinstance(x, dict) for x in off[i1:i2] + on[j1:j2]):
            merged += [merge_pair(a, b, condition) for a, b in zip(off[i1:i2], on[j1:j2])]
            continue
        merged.append(Branch(condition, on[j1:j2], off[i1:i2]))
    return merged
