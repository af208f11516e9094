"""One object's template: block YAML whose placeholders, merges and branches become Helm actions."""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import yaml

from components.chart.branches import Branch, BranchKey
from components.chart.chart_sink import ChartSink
from components.chart.placeholder_values import (
    Expr,
    ListPlaceholder,
    MapPlaceholder,
    MergeKey,
    SpliceKey,
    Tokens,
)

PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./=-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
# A line of a YAML document that is `key: <token>` or `- <token>`: PyYAML may have quoted the real value.
WHOLE_YAML_SCALAR = re.compile(r"^\s*(- )*([^\s#'\"-][^:]*: )?$")


def go_text(text: str, action_follows: bool = False) -> str:
    """Literal text in a template: Helm's own delimiters escaped (Prometheus and Grafana use `{{` too)."""
    text = text.replace("{{", '{{ "{{" }}')
    # A `{` right before an action would merge with its `{{`.
    return text[:-1] + '{{ "{" }}' if action_follows and text.endswith("{") else text


def action(expr: Expr, whole: bool = False) -> str:
    """`{{ ... }}`: JSON for whole values and numbers (types kept), raw text inside a string."""
    return f"{{{{ {expr.pipeline} | toJson }}}}" if whole or expr.kind == "integer" else f"{{{{ {expr.pipeline} }}}}"


def spliced(mapping: dict[Any, Any], at: BranchKey, entries: dict[Any, Any]) -> dict[Any, Any]:
    """`mapping` with the Branch under `at` replaced, in its place, by `entries` (one of its cases)."""
    result: dict[Any, Any] = {}
    for key, value in mapping.items():
        if key == at:
            result.update(entries)
        else:
            result[key] = value
    return result


class ManifestWriter:
    """Writes trees built on placeholders as template text."""

    def __init__(self, tokens: Tokens):
        self.tokens, self.sink = tokens, ChartSink(tokens)

    def document(self, tree: dict[str, Any], guard: list[str]) -> str:
        body = "\n".join(self.entries(tree, 0))
        if not guard:
            return body + "\n"
        condition = guard[0] if len(guard) == 1 else "and " + " ".join(f"({c})" if " " in c else c for c in guard)
        return f"{{{{- if {condition} }}}}\n{body}\n{{{{- end }}}}\n"

    def entries(self, mapping: dict[Any, Any], indent: int) -> list[str]:
        lines: list[str] = []
        for key, value in mapping.items():
            if isinstance(key, BranchKey):
                lines += self.branch(value, indent, self.entries)
            elif isinstance(key, SpliceKey):  # a helper's entries, when it gives any
                pad = " " * indent
                lines += [f"{pad}{{{{- with {key.expr.pipeline} }}}}", f"{pad}{{{{- . | nindent {indent} }}}}",
                          f"{pad}{{{{- end }}}}"]
            elif isinstance(key, MergeKey):
                raise ValueError(f"a merged map must be written as one value: {key.expr.pipeline}")
            else:
                lines += self.attach(" " * indent + self.key(key) + ":", value, indent)
        return lines

    def items(self, items: list[Any], indent: int) -> list[str]:
        pad, lines = " " * indent, []
        for item in items:
            if isinstance(item, Branch):
                lines += self.branch(item, indent, self.items)
            elif isinstance(item, ListPlaceholder):
                lines += [f"{pad}{{{{- with {item.expr.pipeline} }}}}", f"{pad}{{{{- toYaml . | nindent {indent} }}}}",
                          f"{pad}{{{{- end }}}}"]
            elif isinstance(item, dict) and item and isinstance(next(iter(item)), str):
                nested = self.entries(item, indent + 2)
                lines += [pad + "- " + nested[0][indent + 2:], *nested[1:]]
            else:
                lines += self.attach(pad + "-", item, indent)
        return lines

    def branch(self, branch: Branch, indent: int, write: Callable[[Any, int], list[str]]) -> list[str]:
        pad = " " * indent
        then, otherwise = write(branch.then, indent), write(branch.otherwise, indent)
        if not then:
            negated = f"({branch.condition})" if " " in branch.condition else branch.condition
            return [f"{pad}{{{{- if not {negated} }}}}", *otherwise, f"{pad}{{{{- end }}}}"]
        lines = [f"{pad}{{{{- if {branch.condition} }}}}", *then]
        if otherwise:
            lines += [f"{pad}{{{{- else }}}}", *otherwise]
        return lines + [f"{pad}{{{{- end }}}}"]

    def attach(self, head: str, value: Any, indent: int) -> list[str]:
        """`head` and its value: inline when a scalar, else a block one level deeper."""
        deeper = " " * (indent + 2)
        if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value)), MergeKey):
            value = next(iter(value.values()))  # `dict(placeholder)`: a copy of the map itself
        if isinstance(value, (MapPlaceholder, ListPlaceholder)) or (isinstance(value, list) and len(value) == 1
                                                                     and isinstance(value[0], ListPlaceholder)):
            placeholder = value if not isinstance(value, list) else value[0]
            return [head, f"{deeper}{{{{- {self.yaml_of(placeholder.expr)} | nindent {indent + 2} }}}}"]
        if isinstance(value, dict) and any(isinstance(k, MergeKey) for k in value):
            branched = next((k for k in value if isinstance(k, BranchKey)), None)
            if branched is not None:  # entries that differ under a condition: the whole merge written per case
                branch = value[branched]
                then = self.attach(head, spliced(value, branched, branch.then), indent)[1:]
                otherwise = self.attach(head, spliced(value, branched, branch.otherwise), indent)[1:]
                return [head, f"{deeper}{{{{- if {branch.condition} }}}}", *then, f"{deeper}{{{{- else }}}}",
                        *otherwise, f"{deeper}{{{{- end }}}}"]
            return [head, f"{deeper}{{{{- {self.merged(value)} | toYaml | nindent {indent + 2} }}}}"]
        if isinstance(value, dict):
            return [head, *self.entries(value, indent + 2)] if value else [head + " {}"]
        if isinstance(value, list):
            return [head, *self.items(value, indent + 2)] if value else [head + " []"]
        if isinstance(value, str) and "\n" in value:
            return [head + " " + self.block_indicator(value), *self.block_lines(value, indent + 2)]
        return [head + " " + self.scalar(value)]

    @staticmethod
    def yaml_of(expr: Expr) -> str:
        return expr.yaml_pipeline or f"{expr.pipeline} | toYaml"

    def merged(self, mapping: dict[Any, Any]) -> str:
        """`merge` of the parts in reverse, so later parts win as in `{**a, **b}`; the first argument is fresh."""
        parts: list[str] = []
        fixed: dict[str, Any] = {}
        for key, value in mapping.items():
            if isinstance(key, MergeKey):
                if fixed:
                    parts.append(self.sink.argument(fixed))
                    fixed = {}
                parts.append(value.expr.operand)
            else:
                fixed[key] = value
        if fixed:
            parts.append(self.sink.argument(fixed))
        parts.reverse()
        if len(parts) == 1:
            return parts[0]
        if parts[0].startswith(".Values"):
            parts[0] = f"(deepCopy {parts[0]})"
        return "merge " + " ".join(parts)

    def key(self, key: str) -> str:
        hits = self.tokens.find(key)
        if hits and hits[0][:2] == (0, len(key)):
            return action(hits[0][2], whole=True)
        return self.scalar(key)

    def scalar(self, value: Any) -> str:
        if value is None or isinstance(value, bool):
            return {None: "null", True: "true", False: "false"}[value]
        if isinstance(value, int):
            expr = self.tokens.integers.get(value)
            return action(expr, whole=True) if expr else str(value)
        hits = self.tokens.find(value)
        if not hits:
            plain = PLAIN.match(value) and value.lower() not in YAML_WORDS
            return value if plain else go_text(json.dumps(value))
        if len(hits) == 1 and hits[0][:2] == (0, len(value)):
            return action(hits[0][2], whole=True)
        text, at = '"', 0
        for start, end, expr in hits:
            text += go_text(json.dumps(value[at:start])[1:-1], action_follows=True) + action(expr)
            at = end
        return text + go_text(json.dumps(value[at:])[1:-1]) + '"'

    @staticmethod
    def block_indicator(text: str) -> str:
        body = text.rstrip("\n")
        chomp = {0: "-", 1: ""}.get(len(text) - len(body), "+")
        first = next((line for line in body.split("\n") if line), "")
        return "|" + ("2" if first.startswith(" ") else "") + chomp

    def block_lines(self, text: str, indent: int) -> list[str]:
        """A literal block; tokens in a YAML document that stand alone are quoted as PyYAML quotes them."""
        is_yaml = self.is_yaml_document(text)
        lines = []
        for line in text.rstrip("\n").split("\n"):
            out, at = "", 0
            for start, end, expr in self.tokens.find(line):
                alone = is_yaml and expr.kind == "string" and end == len(line) and WHOLE_YAML_SCALAR.match(line[:start])
                out += go_text(line[at:start], action_follows=True)
                out += f'{{{{ include "ascend-npu.yamlString" {expr.operand} }}}}' if alone else action(expr)
                at = end
            out += go_text(line[at:])
            lines.append(" " * indent + out if out else "")
        return lines

    @staticmethod
    def is_yaml_document(text: str) -> bool:
        try:
            json.loads(text)
            return False
        except ValueError:
            pass
        try:
            return isinstance(yaml.safe_load(text), (dict, list))
        except yaml.YAMLError:
            return False
