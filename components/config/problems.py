"""Config problems: one line each, naming the field and what to write instead."""
from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any, Callable, Iterable, Optional

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from components.config.base import DNS_SUBDOMAIN, PATTERN_WORDS
from components.config.redact import looks_secret, preview, preview_key

NAMESPACE = "ascend-npu"
# What to write when a value has the wrong type, by pydantic error kind (never a pattern or a Python type name).
TYPE_RULES = {
    "model_type": "write a mapping (`key: value` lines)", "dict_type": "write a mapping (`key: value` lines)",
    "model_attributes_type": "write a mapping (`key: value` lines)",
    "list_type": "write a list (`- item` lines or `[a, b]`)", "string_type": "write text",
    "int_type": "write a whole number", "int_parsing": "write a whole number",
    "int_from_float": "write a whole number", "bool_type": "write true or false",
    "bool_parsing": "write true or false",
}


@dataclass(frozen=True, order=True)
class Problem:
    """What is wrong with one field of the stack config."""

    field: str
    message: str
    shown_field: str = dataclass_field(default="", compare=False)  # the field as printed: its node named

    def __str__(self) -> str:
        return f"{NAMESPACE}:{self.shown_field or self.field}: {self.message}"


class SpecError(Exception):
    """The stack config is invalid; every problem is listed, nothing was registered (the program raises it as a
    Pulumi RunError, see config_source)."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = sorted(set(problems), key=lambda p: (p.field.split(".")[0], p.field, p.message))
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"the stack config has {len(self.problems)} problem(s); nothing was changed:\n{lines}")


NODE_REFERENCE = re.compile(r"\bnodes\[(\d+)\]")


def node_names(raw_nodes: Any) -> dict[int, str]:
    """Index -> name of each node as written, where the name is a valid node name (never a secret pasted there)."""
    if not isinstance(raw_nodes, list):
        return {}
    names = {i: n["name"].strip() for i, n in enumerate(raw_nodes)
             if isinstance(n, dict) and isinstance(n.get("name"), str)}
    return {i: name for i, name in names.items()
            if len(name) <= 253 and re.fullmatch(DNS_SUBDOMAIN, name) and not looks_secret(name)}


def name_nodes_in(text: str, names: dict[int, str]) -> str:
    """Each `nodes[i]` in the text followed by that node's name, when it has one."""
    return NODE_REFERENCE.sub(lambda m: f"{m[0]} ({names[int(m[1])]})" if int(m[1]) in names else m[0], text)


def with_node_names(problems: Iterable[Problem], raw_nodes: Any) -> list[Problem]:
    """Each `nodes[i]` a problem mentions, in its field or its message, followed by that node's name."""
    names = node_names(raw_nodes)
    return [replace(p, message=name_nodes_in(p.message, names), shown_field=name_nodes_in(p.field, names))
            for p in problems]


def field_path(key: str, loc: tuple) -> str:
    """`nodes`, (2, 'address') -> `nodes[2].address`."""
    path = key
    for part in loc:
        if part == "[key]":  # pydantic's marker for a mapping key it refused: the key itself is the field
            continue
        path += f"[{part}]" if isinstance(part, int) else f".{preview_key(part)}"
    return path


def _model_at(annotation: Any, loc: tuple) -> type[BaseModel] | None:
    """The model class that holds the field at `loc` (to list its known keys)."""
    current = annotation
    for part in loc:
        current = _unwrap(current, part)
        if current is None:
            return None
    current = _unwrap(current, None)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _mapping_hint(annotation: Any, loc: tuple) -> Callable[[Optional[str]], str] | None:
    """The mapping_hint of the model that holds the field at `loc`, when it has one."""
    return getattr(_model_at(annotation, loc), "mapping_hint", None)


def _unwrap(annotation: Any, part: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _unwrap(inner[0], part) if len(inner) == 1 else None
    if part is None:
        return annotation
    if origin in (list, tuple) and isinstance(part, int):
        return args[0]
    if origin is dict:
        return args[1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, info in annotation.model_fields.items():
            if part in (info.alias, name):
                return info.annotation
    return None


def describe(key: str, annotation: Any, error: ErrorDetails, secret: bool) -> Problem:
    """Turn one pydantic error into a Problem a person can act on."""
    loc, kind, given = error["loc"], error["type"], error.get("input")
    shown = "the secret value" if secret else preview(given)
    model = _model_at(annotation, loc[:-1])
    info = next((f for n, f in model.model_fields.items() if loc[-1] in (f.alias, n)), None) if model and loc else None
    if kind == "extra_forbidden":
        known = ", ".join(f.alias or n for n, f in model.model_fields.items()) if model else "see the reference"
        message = f"unknown key; the keys here are: {known}"
    elif kind == "missing":
        message = "required and missing" + (f"; {info.description}" if info and info.description else "")
    elif kind in ("value_error", "assertion_error"):
        message = str(error["ctx"]["error"])
        if secret:
            message = message.replace(preview(given), shown)
    elif kind == "string_pattern_mismatch":
        rule = PATTERN_WORDS.get(error["ctx"]["pattern"], "see the configuration reference for its form")
        what = f" ({info.description.rstrip('.')})" if info and info.description else ""
        message = f"{shown} is not valid here{what}; {rule}"
    elif kind in TYPE_RULES and isinstance(given, str) and (mapping_hint := _mapping_hint(annotation, loc)):
        hint = mapping_hint(None if secret else given)
        message = f"written as one string; write a mapping: {hint}"
    elif kind in TYPE_RULES:
        message = f"{shown} is not allowed here; {TYPE_RULES[kind]}"
    elif error["msg"].startswith("Input should be"):
        message = f"{shown} is not allowed; it should be {error['msg'][len('Input should be '):]}"
    else:
        message = f"{error['msg']} (got {shown})"
    return Problem(field_path(key, loc), message[:400])


def from_validation_error(key: str, annotation: Any, exc: ValidationError, secret: bool = False) -> list[Problem]:
    """All the problems one section's validation found."""
    return [describe(key, annotation, e, secret) for e in exc.errors(include_url=False)]
