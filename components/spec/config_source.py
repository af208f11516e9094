"""Read the stack config from Pulumi, the one place the program touches config."""
from __future__ import annotations

import json
from typing import Any, Collection, Mapping

import pulumi
from pulumi.runtime import config as runtime_config

from components.spec.problems import NAMESPACE
from components.spec.stack import CONFIG_KEYS, StackSpec, parse_stack

SECRET_KEY = next(k.name for k in CONFIG_KEYS if k.secret)


def raw_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """`ascend-npu:key` -> text, as the engine passes config, to key -> decoded value (the secret left out)."""
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix):]: _decode(v) for k, v in values.items()
            if k.startswith(prefix) and k != f"{prefix}{SECRET_KEY}"}


def _decode(text: Any) -> Any:
    """Structured values arrive as JSON text; anything else stays as written, for the model to judge."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def spec_from_values(values: Mapping[str, Any], secret_keys: Collection[str], private_key: Any = None) -> StackSpec:
    """A StackSpec from config as the engine passes it; the SSH key is `private_key`, else its plain value."""
    full_secret_key = f"{NAMESPACE}:{SECRET_KEY}"
    key = private_key if private_key is not None else (values.get(full_secret_key) or None)
    return parse_stack(raw_config(values), key, full_secret_key in secret_keys)


def load_stack_spec() -> StackSpec:
    """The validated StackSpec of the running stack, or SpecError listing every problem."""
    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    full_secret_key = f"{NAMESPACE}:{SECRET_KEY}"
    secret = [full_secret_key] if runtime_config.is_config_secret(full_secret_key) else []
    private_key = pulumi.Config(NAMESPACE).get_secret(SECRET_KEY) if values.get(full_secret_key) else None
    return spec_from_values(values, secret, private_key)
