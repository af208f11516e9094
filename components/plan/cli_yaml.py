"""YAML read as the Pulumi CLI reads a stack file: gopkg.in/yaml.v3 decoding into `any` (see README)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import yaml

from components.plan.yaml_scalars import LEADING_ZERO, is_timestamp, number_text, resolve_plain

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 64
MAX_VALUES = 250_000  # our own bound on values after alias expansion (yaml.v3 bounds only the ratio)
CORE = "tag:yaml.org,2002:"


class YamlError(Exception):
    """The text cannot be read as YAML at all; the message says where, never what."""


@dataclass
class Node:
    """A composed YAML node: scalar text or children, its tag, whether it was plain, its line (1-based)."""

    kind: str
    line: int
    tag: str | None = None
    value: Any = None
    plain: bool = False
    anchor: str | None = None
    children: list = field(default_factory=list)


@dataclass
class Alias:
    """A `*name` occurrence: decoded again each time, as yaml.v3 does."""

    target: Node
    line: int


def compose(text: str) -> Node | None:
    """The first document as nodes, iteratively and with bounded depth; several documents are refused."""
    stack: list[Node] = []
    anchors: dict[str, Node] = {}
    root: Node | None = None
    documents = 0
    try:
        for event in yaml.parse(text, Loader=Loader):
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise YamlError(f"line {line}: a second YAML document starts here; the Pulumi CLI reads only "
                                    "the first, so remove the `---` and what follows or merge it into the first")
            elif isinstance(event, yaml.AliasEvent):
                target = anchors.get(event.anchor)
                if target is None:
                    raise YamlError(f"line {line}: alias *{event.anchor[:40]} names no anchor defined above it")
                if any(open_node is target for open_node in stack):
                    raise YamlError(f"line {line}: anchor '{event.anchor[:40]}' value contains itself")
                stack[-1].children.append(Alias(target, line))
            elif isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                node = _node(event, line)
                if event.anchor:
                    anchors[event.anchor] = node  # a redefined anchor replaces the old one, as in yaml.v3
                if stack:
                    stack[-1].children.append(node)
                else:
                    root = node
                if node.kind != "scalar":
                    stack.append(node)
                    if len(stack) > MAX_DEPTH:
                        raise YamlError(f"line {line}: nested more than {MAX_DEPTH} levels deep; a stack file "
                                        "needs far fewer")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                stack.pop()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        context = f" ({exc.context[:60]} at line {exc.context_mark.line + 1})" \
            if exc.context and exc.context_mark and exc.context_mark is not mark else ""
        raise YamlError(f"{where}{(exc.problem or 'not valid YAML')[:120]}{context}; fix the YAML syntax there") \
            from None
    except yaml.YAMLError:
        raise YamlError("not valid YAML (a character YAML does not allow, or a broken encoding)") from None
    return root


def _node(event, line: int) -> Node:
    kind = {yaml.ScalarEvent: "scalar", yaml.SequenceStartEvent: "seq", yaml.MappingStartEvent: "map"}[type(event)]
    tag = None if event.tag in (None, "!") else event.tag
    if kind != "scalar":
        return Node(kind, line, tag, anchor=event.anchor)
    plain = event.tag is None and event.style in ("", None)
    return Node(kind, line, tag, event.value, plain=plain, anchor=event.anchor)


class Decoder:
    """Nodes to values with yaml.v3's rules: duplicate keys refused, aliasing bounded, merge keys applied."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, int, str]] = []
        self.numbers: dict[str, str] = {}  # path -> source text of a plain scalar read as a number or bool
        self.decoded = self.aliased = self.alias_depth = 0

    def decode(self, item: Node | Alias, path: str) -> Any:
        self.decoded += 1
        if self.alias_depth:
            self.aliased += 1
        if (self.aliased > 100 and self.decoded > 1000 and self.aliased / self.decoded > _alias_ratio(self.decoded)) \
                or self.decoded > MAX_VALUES:
            raise YamlError(f"line {item.line}: the document contains excessive aliasing (the Pulumi CLI refuses "
                            "it too); write the values out instead of repeating anchors")
        if isinstance(item, Alias):
            self.alias_depth += 1
            try:
                return self.decode(item.target, path)
            finally:
                self.alias_depth -= 1
        if item.kind == "seq":
            return [self.decode(child, f"{path}[{i}]") for i, child in enumerate(item.children)]
        if item.kind == "map":
            return self._mapping(item, path)
        return self._scalar(item, path)

    def _scalar(self, node: Node, path: str) -> Any:
        if node.tag is not None and node.tag != CORE + "str":
            self.problems.append((path, node.line, f"the tag {_tag(node.tag)} is not supported in a stack file; "
                                                   "remove it (quote the value to make it text)"))
            return None
        if not node.plain:
            return node.value
        value = resolve_plain(node.value)
        if is_timestamp(node.value):
            self.problems.append((path, node.line, f"{node.value[:40]} is read by the Pulumi CLI as a timestamp and "
                                                   "reaches the program rewritten (e.g. '2001-12-14 00:00:00 +0000 "
                                                   f"UTC'); if it is text, quote it: '{node.value[:40]}'"))
        elif isinstance(value, float) and not math.isfinite(value):
            self.problems.append((path, node.line, f"{node.value} is not a number the Pulumi CLI can store in "
                                                   f"config; if it is text, quote it: '{node.value}'"))
        elif LEADING_ZERO.match(node.value) and not isinstance(value, str):
            self.problems.append((path, node.line, f"{node.value[:24]} is read by the Pulumi CLI as the number "
                                                   f"{number_text(value)} (a leading 0 means octal): if it is "
                                                   f"text, quote it: '{node.value[:24]}'; if a number, write it "
                                                   "without the leading 0"))
        elif not isinstance(value, str) and value is not None and len(self.numbers) < 10_000:
            self.numbers[path] = node.value
        return value

    def _mapping(self, node: Node, path: str) -> dict:
        result: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        merges = []
        for key_node, value_node in zip(node.children[0::2], node.children[1::2]):
            key = self._key(key_node, path)
            if key is None:
                continue
            if key is _MERGE:
                merges.append(value_node)
                continue
            where = _join(path, key)
            if key in first_line:
                self.problems.append((where, key_node.line, f"the key is written twice (first at line "
                                                              f"{first_line[key]}); the Pulumi CLI refuses "
                                                              "duplicate keys: keep one"))
                continue
            first_line[key] = key_node.line
            result[key] = self.decode(value_node, where)
        for merge in merges:
            for key, value in self._merged(merge, path).items():
                result.setdefault(key, value)
        return result

    def _key(self, item: Node | Alias, path: str) -> Any:
        node = item.target if isinstance(item, Alias) else item
        if node.kind != "scalar":
            self.problems.append((path, node.line, "a key that is a list or mapping; write keys as plain text"))
            return None
        if node.plain and node.value == "<<":
            return _MERGE
        if node.tag is not None and node.tag != CORE + "str":
            self.problems.append((path, node.line, f"the tag {_tag(node.tag)} is not supported on a key; remove it"))
            return None
        value = resolve_plain(node.value) if node.plain else node.value
        if not isinstance(value, str):
            self.problems.append((path, node.line, f"the key {node.value[:24]!r} is read by the Pulumi CLI as "
                                                   f"{number_text(value)}, not as text; quote it: "
                                                   f"'{node.value[:24]}'"))
            return None
        return value

    def _merged(self, item: Node | Alias, path: str) -> dict:
        """`<<: *defaults` (or a list of them): earlier maps win, explicit keys win over all."""
        node = item.target if isinstance(item, Alias) else item
        sources = node.children if node.kind == "seq" else [item]
        merged: dict[str, Any] = {}
        for source in sources:
            value = self.decode(source, path)
            if not isinstance(value, dict):
                self.problems.append((path, node.line, "`<<` merges mappings only; write a mapping or a list of "
                                                       "mappings after it"))
                return {}
            for key, inner in value.items():
                merged.setdefault(key, inner)
        return merged


_MERGE = object()


def _alias_ratio(decoded: int) -> float:
    """yaml.v3's allowedAliasRatio: 99% of values may come from aliases in a small document, 10% in a huge one."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


def _tag(tag: str) -> str:
    return ("!!" + tag[len(CORE):] if tag.startswith(CORE) else tag)[:40]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def load(text: str) -> tuple[Any, list[tuple[str, int, str]], dict[str, str]]:
    """(value, problems as (path, line, message), path -> source text of plain scalars read as numbers)."""
    root = compose(text)
    decoder = Decoder()
    value = None if root is None else decoder.decode(root, "")
    return value, decoder.problems, decoder.numbers
