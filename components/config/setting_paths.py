"""Dotted setting paths as a stack writes them ("exporter.updateTime"), resolved against the config models."""
from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import BaseModel

from components.config.stack import CONFIG_KEYS, KEYS_BY_NAME


@dataclass(frozen=True)
class SettingPath:
    """Where a setting is declared (its model and key there) and how to read it from a StackSpec."""

    path: str
    model: type[BaseModel]
    key: str  # as the stack and the model's JSON schema write it
    attrs: str  # dotted attribute path from a StackSpec, for operator.attrgetter
    is_field: bool  # False: a property of the model, derived from its fields


def model_of(annotation: Any) -> Optional[type[BaseModel]]:
    """The model an annotation holds, through Optional; None for anything else."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return model_of(inner[0]) if len(inner) == 1 else None
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def attribute_of(model: type[BaseModel], key: str, path: str = "") -> str:
    """The attribute of the field a stack writes as `key`; ValueError naming the model's keys when it has none."""
    found = next((name for name, info in model.model_fields.items() if (info.alias or name) == key), None)
    if found is None:
        known = ", ".join(info.alias or name for name, info in model.model_fields.items())
        raise ValueError(f"{path or key}: {model.__name__} has no key {key!r}; its keys are: {known}")
    return found


def setting_path(path: str) -> SettingPath:
    """PATH resolved key by key; a key no model declares raises ValueError naming the keys there are."""
    section, *keys = path.split(".")
    if section not in KEYS_BY_NAME:
        raise ValueError(f"{path}: no config key {section!r}; the keys are: {', '.join(KEYS_BY_NAME)}")
    model, attrs = model_of(KEYS_BY_NAME[section].annotation), [KEYS_BY_NAME[section].attr]
    for depth, key in enumerate(keys):
        if model is None:
            raise ValueError(f"{path}: {'.'.join([section, *keys[:depth]])} is not an object with keys")
        if depth == len(keys) - 1 and isinstance(getattr(model, key, None), property):
            return SettingPath(path, model, key, ".".join([*attrs, key]), is_field=False)
        attr = attribute_of(model, key, path)
        if depth == len(keys) - 1:
            return SettingPath(path, model, key, ".".join([*attrs, attr]), is_field=True)
        model, attrs = model_of(model.model_fields[attr].annotation), [*attrs, attr]
    raise ValueError(f"{path}: name a setting inside the section, e.g. {section}.<key>")


class SectionDefaults:
    """Every config section, read as a StackSpec attribute, at its model's defaults but those given."""

    def __init__(self, **given: Any) -> None:
        self.__dict__.update(given)

    def __getattr__(self, name: str) -> Any:
        key = next((k for k in CONFIG_KEYS if k.attr == name), None)
        if key is None:
            raise AttributeError(name)
        return key.annotation()
