"""Stand-in for containerd 2.x, used only when a test sets the `containerd-major` knob to 2.

Debian ships containerd 1.6 here, so this is NOT containerd: it answers `--version` like 2.x does and does what
2.x's `config dump` does that matters to the host scripts: refuse a file that is not TOML or whose version is
not 2 or 3, load `imports` (absolute paths resolved inside the sandbox, relative ones next to the file) and merge
them key by key, then print the merged tables in containerd's dump layout. It has none of containerd's defaults.
"""
from __future__ import annotations

import glob
import json
import os
import re
import sys
import tomllib

VERSION_LINE = "containerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20"


def merge(into: dict, other: dict) -> dict:
    """containerd 2.x semantics: tables merge key by key, everything else is replaced."""
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value
    return into


def load(path: str, loaded: list[str]) -> dict:
    with open(path, "rb") as f:
        config = tomllib.load(f)
    if config.get("version") not in (2, 3):
        raise ValueError(f"unsupported config version {config.get('version', 1)} in {path}")
    loaded.append(path)
    for pattern in config.pop("imports", []):
        pattern = os.environ["ASCEND_ROOT"] + pattern if pattern.startswith("/") else \
            os.path.join(os.path.dirname(path), pattern)
        for found in sorted(glob.glob(pattern)):
            merge(config, load(found, loaded))
    return config


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def dump(table: dict, path: tuple[str, ...] = ()) -> list[str]:
    """Tables as `[a."b.c".d]` headers with `key = value` lines under them, like containerd's dump."""
    lines = [f"[{'.'.join(_key(p) for p in path)}]"] if path else []
    indent = "  " * len(path)
    for key, value in sorted(table.items()):
        if not isinstance(value, dict):
            lines.append(f"{indent}{key} = {json.dumps(value)}")
    for key, value in sorted(table.items()):
        if isinstance(value, dict):
            lines += [""] + dump(value, path + (key,))
    return lines


def main(args: list[str]) -> int:
    if args == ["--version"]:
        print(VERSION_LINE)
        return 0
    if len(args) != 4 or args[0] != "--config" or args[2:] != ["config", "dump"]:
        print("containerd 2.x stand-in: only --version and --config FILE config dump", file=sys.stderr)
        return 1
    loaded: list[str] = []
    try:
        config = load(args[1], loaded)
    except (OSError, ValueError) as err:  # tomllib.TOMLDecodeError is a ValueError
        print(f"containerd: failed to load TOML from {args[1]}: {err}", file=sys.stderr)
        return 1
    config["imports"] = loaded
    print("\n".join(dump(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
