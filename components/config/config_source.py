"""Read the stack config from Pulumi, the one place the program touches config."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Collection, Mapping

from components.config.cluster_reach import cluster_problems
from components.config.local_files import agent_problems, local_file_problems, openssh_problems
from components.config.problems import NAMESPACE, SpecError
from components.config.stack import CONFIG_KEYS, StackSpec, parse_stack

SECRET_KEYS = tuple(k.name for k in CONFIG_KEYS if k.secret)
SSH_KEY, MIRROR_CREDENTIALS, REGISTRY_CREDENTIALS = "sshPrivateKey", "mirrorCredentials", "registryCredentials"
# What the offline plan hands over for a `secure:` value it cannot decrypt: its form is the engine's to check.
UNREAD_SECRET = "[secret: decrypted only by the stack's secrets provider]"


def raw_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """`ascend-npu:key` -> text, as the engine passes config, to key -> decoded value (the secrets left out)."""
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix):]: _decode(v) for k, v in values.items()
            if k.startswith(prefix) and k[len(prefix):] not in SECRET_KEYS}


def _decode(text: Any) -> Any:
    """Structured values arrive as JSON text; anything else stays as written, for the model to judge."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def spec_from_values(values: Mapping[str, Any], secret_keys: Collection[str],
                     secrets: Mapping[str, Any] | None = None, stack: str = "<stack>") -> StackSpec:
    """A StackSpec from config as the engine passes it; each secret from `secrets` (Outputs), else its plain value."""
    found = {}
    for name in SECRET_KEYS:
        full = f"{NAMESPACE}:{name}"
        value = (secrets or {}).get(name)
        found[name] = (value if value is not None else (values.get(full) or None), full in secret_keys)
    (key, key_secret), (login, login_secret) = found[SSH_KEY], found[MIRROR_CREDENTIALS]
    registry_login, registry_secret = found[REGISTRY_CREDENTIALS]
    text = values.get(f"{NAMESPACE}:{REGISTRY_CREDENTIALS}")
    sections = {k.split(":", 1)[1] for k in secret_keys if k.startswith(f"{NAMESPACE}:")}
    return parse_stack(raw_config(values), key, key_secret, mirror_credentials=login,
                       mirror_credentials_is_secret=login_secret, secret_sections=sections, stack=stack,
                       registry_credentials=registry_login, registry_credentials_is_secret=registry_secret,
                       registry_login_text=text if isinstance(text, str) and text != UNREAD_SECRET else None)


def load_stack_spec() -> StackSpec:
    """The validated StackSpec of the running stack, or SpecError listing every problem (as a Pulumi RunError,
    which the engine prints without a traceback)."""
    import pulumi  # here, so the offline plan can check a config without loading the Pulumi SDK
    from pulumi.runtime import config as runtime_config
    from pulumi.runtime import settings as runtime_settings
    from pulumi.runtime.mocks import MockMonitor

    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secrets = {}
    secret_keys = [key for key in values if runtime_config.is_config_secret(key)]
    for name in SECRET_KEYS:
        full = f"{NAMESPACE}:{name}"
        if values.get(full):
            secrets[name] = pulumi.Config(NAMESPACE).get_secret(name)
    class StackConfigError(SpecError, pulumi.RunError):
        """The problems as a RunError: the engine prints them without a traceback."""

    try:
        spec = spec_from_values(values, secret_keys, secrets, stack=pulumi.get_stack())
    except SpecError as exc:
        raise StackConfigError(exc.problems) from None
    # The offline plan runs under mocks, which read no local file and dial nothing: it plans a stack whose packages
    # are elsewhere, from any shell.
    if not isinstance(runtime_settings.get_monitor(), MockMonitor):
        command = "preview" if pulumi.runtime.is_dry_run() else "up"
        problems = (local_file_problems(spec, Path.cwd()) + agent_problems(spec, os.environ, command)
                    + openssh_problems(spec) + cluster_problems(spec))
        if problems:
            raise StackConfigError(problems)
    return spec
