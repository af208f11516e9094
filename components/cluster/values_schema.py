"""The parts of the values contract: values, groups and JSON Schema pieces matching the checks of the config models."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import Any, Callable, Optional, Union

from pydantic import BaseModel

from components.config.base import UNPINNED_WORDS
from components.config.setting_paths import attribute_of, setting_path

LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
# Unpinned words, any case, and `1.x`-style ranges: what `require_pinned` refuses in a tag.
UNPINNED_TAG = "(?i)^(" + "|".join(sorted(w for w in UNPINNED_WORDS if w.isalpha())) + r")$|\.x"
# Marks a string enum whose members render different objects: the chart builds once per member.
CHART_SWITCH = "chart switch:"


@cache
def _model_properties(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema properties, generated once per model: the contract reads them at import."""
    return model.model_json_schema(by_alias=True)["properties"]


def spec_field(model: type[BaseModel], field: str, description: str = "", **extra: Any) -> dict[str, Any]:
    """One field's schema as pydantic writes it for the config model (optional becomes a null type)."""
    schema = dict(_model_properties(model)[field])
    for variant in schema.pop("anyOf", []):
        if variant.get("type") != "null":
            schema.update(variant)
    if "default" in schema and schema["default"] is None:
        schema["type"] = [schema["type"], "null"]
    for noise in ("title", "default"):
        schema.pop(noise, None)
    if description:
        schema["description"] = description
    return {**schema, **extra}


@dataclass(frozen=True)
class Value:
    """One value: its schema and how a stack's sources give it."""

    schema: dict[str, Any]
    source: Callable[[Any], Any]


@dataclass(frozen=True)
class Group:
    """An object of named values; `extra` holds schema keywords across its keys."""

    fields: dict[str, Union[Value, "Group"]]
    extra: dict[str, Any] = field(default_factory=dict)

    def values(self, sources: Any) -> dict[str, Any]:
        return {k: f.values(sources) if isinstance(f, Group) else f.source(sources) for k, f in self.fields.items()}

    def schema(self) -> dict[str, Any]:
        return object_schema({k: f.schema() if isinstance(f, Group) else f.schema for k, f in self.fields.items()},
                             **self.extra)


@dataclass(frozen=True)
class ChartOnly:
    """A value no stack config sets, and why: the stack gets the chart's default."""

    value: Any
    why: str

    def __call__(self, _: Any) -> Any:
        return self.value


def setting(path: str, schema: Optional[dict[str, Any]] = None, convert: Optional[Callable[[Any], Any]] = None,
            description: str = "", **extra: Any) -> Value:
    """The stack setting at PATH, e.g. `exporter.updateTime`: its field's schema unless SCHEMA, its value CONVERTed."""
    where = setting_path(path)
    if schema is None and not where.is_field:
        raise ValueError(f"{path} is derived from other settings, not one of its own: give its schema")
    read = attrgetter(where.attrs)
    return Value(spec_field(where.model, where.key, description, **extra) if schema is None else schema,
                 read if convert is None else lambda s: convert(read(s)))


def model_value(model: type[BaseModel], key: str, pick: Callable[[Any], Any], **extra: Any) -> Value:
    """The field `key` of the MODEL object PICK gives."""
    attr = attribute_of(model, key)
    return Value(spec_field(model, key, **extra), lambda s: getattr(pick(s), attr))


def string(description: str, pattern: str, **extra: Any) -> dict[str, Any]:
    """A string matching `pattern`."""
    return {"type": "string", "pattern": pattern, "description": description, **extra}


def integer(description: str, minimum: int, maximum: int) -> dict[str, Any]:
    """An integer within bounds."""
    return {"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}


def flag(description: str) -> dict[str, Any]:
    """A boolean switch."""
    return {"type": "boolean", "description": description}


def string_map(description: str) -> dict[str, Any]:
    """Free-form string keys and values (labels, selectors)."""
    return {"type": "object", "additionalProperties": {"type": "string"}, "description": description}


def subset_of(description: str, members: list[str]) -> dict[str, Any]:
    """A non-empty list of distinct members."""
    return {"type": "array", "items": {"type": "string", "enum": members}, "uniqueItems": True, "minItems": 1,
            "description": description}


def object_schema(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object with exactly these keys; every key without a null default is required."""
    required = [k for k, v in properties.items() if "null" not in v.get("type", ())]
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties,
            **extra}


def pinned_image(what: str) -> dict[str, Any]:
    """The keywords an image block adds to its keys: a tag or a digest is required."""
    return {"description": f"{what} image.",
            "anyOf": [{"required": ["tag"], "properties": {"tag": {"type": "string"}}},
                      {"required": ["digest"], "properties": {"digest": {"type": "string"}}}]}


def release_choice(component: str, what: str, releases: list[str]) -> dict[str, Any]:
    """The catalogued release an image is; each renders its own flags, probes and RBAC."""
    return {"type": "string", "enum": releases, "$comment": f"{CHART_SWITCH} one build per release",
            "description": f"{what} release the image is (components/releases/{component}.yaml); its flags, probes "
                           "and permissions are rendered. Must equal `image.tag` when that tag is a release."}


def tag_names_release(releases: list[str]) -> dict[str, Any]:
    """A catalogued image tag and a different `release` are refused: the tag says what the binary is."""
    return {"allOf": [{"if": {"required": ["image"], "properties": {"image": {
                          "required": ["tag"], "properties": {"tag": {"const": known}}}}},
                       "then": {"properties": {"release": {"const": known}}}} for known in releases]}


def toleration() -> dict[str, Any]:
    """One Kubernetes toleration."""
    return object_schema({
        "key": {"type": "string"}, "operator": {"type": "string", "enum": ["Exists", "Equal"]},
        "value": {"type": "string"},
        "effect": {"type": "string", "enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
        "tolerationSeconds": {"type": "integer"},
    }, required=[])


def when_enabled(then: dict[str, Any]) -> dict[str, Any]:
    """Keywords that hold only while the section's `enabled` is true."""
    return {"if": {"properties": {"enabled": {"const": True}}}, "then": then}
