"""Read Pulumi.yaml and Pulumi.<stack>.yaml the way the Pulumi CLI hands config to a program."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SECRET_PLACEHOLDER = "[secret: decrypted only by the stack's secrets provider]"


class StackFileError(Exception):
    """A stack or project file that cannot be read; the message says which and why."""


@dataclass(frozen=True)
class StackConfig:
    """Config as the language host receives it: `project:key` -> text, plus the secret keys."""

    project: str
    stack: str
    values: dict[str, str]
    secret_keys: list[str]


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _strip_secure(value: Any) -> tuple[Any, bool]:
    """Replace `{secure: ...}` anywhere in a value by a placeholder; say whether one was found."""
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, dict):
        pairs = [(k, _strip_secure(v)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, any(s for _, (_, s) in pairs)
    if isinstance(value, list):
        pairs = [_strip_secure(v) for v in value]
        return [v for v, _ in pairs], any(s for _, s in pairs)
    return value, False


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise StackFileError(f"{path.name}: no such file; create it with `pulumi stack init` and "
                             "`pulumi config set`") from None
    except yaml.YAMLError as exc:
        raise StackFileError(f"{path.name}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise StackFileError(f"{path.name}: expected a mapping at the top")
    return data


def read_stack_config(project_dir: Path, stack: str, stack_file: Path | None = None) -> StackConfig:
    """Project defaults overlaid with the stack's values; secure values become opaque placeholders."""
    project = _load_yaml(project_dir / "Pulumi.yaml")
    name = project["name"]
    stack_data = _load_yaml(stack_file or project_dir / f"Pulumi.{stack}.yaml")
    values: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        if isinstance(decl, dict) and "default" in decl:
            values[full] = _as_text(decl["default"])
        elif not isinstance(decl, dict):
            values[full] = _as_text(decl)
    secret_keys = []
    for key, value in (stack_data.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        plain, secret = _strip_secure(value)
        values[full] = _as_text(plain)
        if secret:
            secret_keys.append(full)
    return StackConfig(project=name, stack=stack, values=values, secret_keys=sorted(secret_keys))
