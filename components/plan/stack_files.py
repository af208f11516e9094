"""Read Pulumi.yaml and Pulumi.<stack>.yaml the way the Pulumi CLI hands config to a program."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.config.problems import name_nodes_in, node_names
from components.plan.cli_yaml import YamlError, load
from components.plan.stack_secrets import secure_problems

SECRET_PLACEHOLDER = "[secret: decrypted only by the stack's secrets provider]"
MAX_FILE_BYTES = 1 << 20  # our bound: a 1000-node stack is about 300 KB
BOM = b"\xef\xbb\xbf"


class StackFileError(Exception):
    """A stack or project file that cannot be read; one line per problem, each saying where and what to write."""

    def __init__(self, file: str, problems: list[str]):
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{file} cannot be used as the Pulumi CLI reads it ({len(problems)} problem(s)); "
                         f"nothing was changed:\n{lines}")


@dataclass(frozen=True)
class StackConfig:
    """Config as the language host receives it: `project:key` -> text, plus the secret keys."""

    project: str
    stack: str
    values: dict[str, str]
    secret_keys: list[str]
    numbers: dict[str, str] = field(default_factory=dict)  # `ns:key[.path]` -> text of a plain scalar read as a number


def _secure(value: Any) -> bool:
    """The CLI's isSecureValue: a mapping whose one key is `secure`, holding text."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def _strip_secure(value: Any) -> tuple[Any, bool]:
    """Replace `{secure: ...}` anywhere in a value by a placeholder; say whether one was found."""
    if _secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, dict):
        pairs = [(k, _strip_secure(v)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, any(s for _, (_, s) in pairs)
    if isinstance(value, list):
        pairs = [_strip_secure(v) for v in value]
        return [v for v, _ in pairs], any(s for _, s in pairs)
    return value, False


def _as_text(value: Any) -> str:
    """The CLI's MarshalString: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _read(path: Path, project: str | None = None) -> tuple[dict, dict[str, str]]:
    """A YAML file's top-level mapping and its number notes, or StackFileError with every problem found."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StackFileError(path.name, ["no such file; create it with `pulumi stack init` and "
                                         "`pulumi config set`"]) from None
    except OSError as exc:
        raise StackFileError(path.name, [f"cannot be read ({exc.strerror})"]) from None
    if len(data) > MAX_FILE_BYTES:
        raise StackFileError(path.name, [f"{len(data)} bytes; a stack file over {MAX_FILE_BYTES} bytes is "
                                         "refused, split the config or remove what is not config"])
    try:
        text = data.removeprefix(BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StackFileError(path.name, [f"byte {exc.start} is not UTF-8; save the file as UTF-8"]) from None
    try:
        value, problems, numbers = load(text)
    except YamlError as exc:
        raise StackFileError(path.name, [str(exc)]) from None
    if problems:
        config = value.get("config") if isinstance(value, dict) else None
        names = node_names(config.get(f"{project}:nodes")) if isinstance(config, dict) else {}
        raise StackFileError(path.name, [f"{name_nodes_in(_shown(where, project), names)}: line {line}: {message}"
                                         for where, line, message in problems[:50]])
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        raise StackFileError(path.name, ["the file must be a mapping (`config:` and its keys), not "
                                         f"{_kind(value)}"])
    return value, numbers


def _shown(where: str, project: str | None) -> str:
    """A reader path as a config field (`config.nodes[1].name` -> `ascend-npu:nodes[1].name`)."""
    if project is None or not where.startswith("config."):
        return where or "the file"
    rest = where.removeprefix("config.")
    return rest if ":" in rest.split(".")[0].split("[")[0] else f"{project}:{rest}"


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a mapping", str: "text", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), "a value")


def config_key(key: str, project: str) -> str | None:
    """The CLI's ParseKey after namespacing: `name` -> `project:name`, `ns:config:name` -> `ns:name`."""
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}"
    if len(parts) == 2 and parts[0]:
        return key
    if len(parts) == 3 and parts[1] == "config" and parts[0]:
        return f"{parts[0]}:{parts[2]}"
    return None


def _project(project_dir: Path) -> tuple[str, dict[str, str], dict[str, dict]]:
    """The project name, its config defaults as text, and the declared type of each typed key."""
    project, _ = _read(project_dir / "Pulumi.yaml")
    name = project.get("name")
    if not isinstance(name, str) or not name:
        raise StackFileError("Pulumi.yaml", ["`name` is missing; write the project name"])
    defaults: dict[str, str] = {}
    types: dict[str, dict] = {}
    declared = project.get("config") or {}
    for key, decl in (declared.items() if isinstance(declared, dict) else []):
        full = config_key(key, name)
        if full and isinstance(decl, dict) and "default" in decl:
            defaults[full] = _as_text(decl["default"])
        elif full and not isinstance(decl, dict):
            defaults[full] = _as_text(decl)
        if full and isinstance(decl, dict) and isinstance(decl.get("type"), str):
            types[full] = decl
    return name, defaults, types


def refused_by_type(decl: dict, value: Any) -> str | None:
    """Why the CLI's ValidateConfigValue (sdk/go/common/workspace/project.go) refuses a value the program would
    otherwise take: nothing, or JSON text, where Pulumi.yaml declares a mapping or a list. Other shapes are left
    to the program's checks, which name the item."""
    if decl.get("type") not in ("object", "array"):
        return None
    if value is None:
        return "is empty"
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return "is text holding JSON" if isinstance(parsed, (dict, list)) else None
    return None


def _type_words(decl: dict) -> str:
    if decl.get("type") == "array":
        return "a list" + (" of mappings" if (decl.get("items") or {}).get("type") == "object" else "")
    words = {"string": "text", "integer": "a whole number", "boolean": "true or false",
             "object": "a mapping (`key: value` lines)"}
    return words.get(decl.get("type"), "the declared type")


def read_stack_config(project_dir: Path, stack: str, stack_file: Path | None = None) -> StackConfig:
    """Project defaults overlaid with the stack's values; secure values become opaque placeholders."""
    name, values, types = _project(project_dir)
    path = stack_file or project_dir / f"Pulumi.{stack}.yaml"
    stack_data, numbers = _read(path, name)
    config = stack_data.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise StackFileError(path.name, [f"config: is {_kind(config)}; write a mapping of `{name}:<key>: value` "
                                         "lines under it (the Pulumi CLI refuses anything else)"])
    problems, secret_keys, written = secure_problems(stack, stack_data), [], {}
    for key, value in config.items():
        full = config_key(key, name)
        if full is None:
            problems.append(f"config.{key[:60]}: not a config key; write `<namespace>:<name>`, e.g. `{name}:nodes`")
            continue
        if full in written:
            problems.append(f"{full[:80]}: written twice in config, as {key[:60]} and {written[full][:60]} (the "
                            "Pulumi CLI keeps one of them at random); keep one")
            continue
        written[full] = key
        plain, secret = _strip_secure(value)
        content = plain if isinstance(plain, (dict, list)) or plain is None else _as_text(plain)
        refused = refused_by_type(types[full], content) if full in types else None
        if refused:
            problems.append(f"{full[:80]}: {refused}, but Pulumi.yaml declares it {types[full]['type']} and the "
                            f"Pulumi CLI refuses that; write {_type_words(types[full])} as YAML, or remove the key")
            continue
        values[full] = "" if plain is None else _as_text(plain)  # the CLI reads a key with no value as ""
        if secret:
            secret_keys.append(full)
    if problems:
        raise StackFileError(path.name, problems)
    return StackConfig(project=name, stack=stack, values=values, secret_keys=sorted(secret_keys),
                       numbers=_number_notes(numbers, written, name))


def placeholder_keys(text: str) -> tuple[str, ...]:
    """`sshPrivateKey, mirrorCredentials` (PLACEHOLDER_SECRETS) as its keys."""
    return tuple(key.strip() for key in text.split(",") if key.strip())


def with_placeholders(config: StackConfig, keys: list[str], secret_keys: list[str]) -> StackConfig:
    """The config with a placeholder secret for each key named (a plan offline, without the secrets)."""
    problems = []
    for key in keys:
        full = config_key(key, config.project) or key
        if full.split(":", 1)[-1] not in secret_keys:
            problems.append(f"PLACEHOLDER_SECRETS: {key[:60]} is not a secret key; "
                            f"name one of {', '.join(secret_keys)}")
        elif config.values.get(full):
            problems.append(f"PLACEHOLDER_SECRETS: {key[:60]} is already set in Pulumi.{config.stack}.yaml; "
                            "plan with its value, or drop it from PLACEHOLDER_SECRETS")
    if problems:
        raise StackFileError(f"Pulumi.{config.stack}.yaml", problems)
    added = {config_key(k, config.project) or k: SECRET_PLACEHOLDER for k in keys}
    return StackConfig(config.project, config.stack, {**config.values, **added},
                       sorted({*config.secret_keys, *added}), config.numbers)


def _number_notes(numbers: dict[str, str], written: dict[str, str], project: str) -> dict[str, str]:
    """Reader paths of plain scalars read as numbers, as config paths (`ascend-npu:nodes[1].name`)."""
    notes = {}
    keys = sorted(((key, full) for full, key in written.items()), key=lambda pair: -len(pair[0]))
    for where, text in numbers.items():
        inner = where.removeprefix("config.")
        for key, full in keys:
            if inner == key or inner.startswith((key + ".", key + "[")):
                notes[full + inner[len(key):]] = text
                break
    return notes
