"""Bytes of the user's engine config lost: what a fault-injection run must keep at 0."""
from __future__ import annotations

import json

ASCEND_KEYS = {("runtimes", "ascend")}  # the stack's own entry; everything else is the user's


def _leaves(value, path=()):
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _leaves(inner, path + (key,))
    else:
        yield path, value


def _lookup(config, path):
    for key in path:
        if not isinstance(config, dict) or key not in config:
            return KeyError
        config = config[key]
    return config


def daemon_json_lost(original: bytes, final: bytes | None, managed: set[tuple[str, ...]] = frozenset()) -> int:
    """Bytes (as compact JSON) of the original's settings that the final daemon.json no longer holds as they were.

    MANAGED: keys the stack was asked to change (e.g. default-runtime with ascendDefaultRuntime); the ascend runtime
    entry is always the stack's own."""
    before = json.loads(original or b"{}")
    try:
        after = json.loads(final) if final is not None else {}
    except ValueError:
        after = {}
    lost = 0
    for path, value in _leaves(before):
        if path[:2] in ASCEND_KEYS or path in managed:
            continue
        if _lookup(after, path) != value:
            lost += len(json.dumps({".".join(path): value}, separators=(",", ":")))
    return lost


def text_lost(original: str, final: str | None, managed: tuple[str, ...] = ()) -> int:
    """Bytes of the original's non-blank lines missing from the final text (config.toml is edited as text).

    MANAGED: substrings of lines the stack was asked to change (e.g. default_runtime_name)."""
    kept = set(line.strip() for line in (final or "").splitlines())
    return sum(len(line.strip()) + 1 for line in original.splitlines()
               if line.strip() and line.strip() not in kept and not any(m in line for m in managed))
