"""The sink of template-function calls on placeholders: each call written as an `include` of its helper."""
from __future__ import annotations

import inspect
import json
from typing import Any, Callable, Optional

from components.chart.placeholder_values import (
    EntriesPlaceholder,
    Expr,
    ListPlaceholder,
    MapPlaceholder,
    Tokens,
    ValuesPlaceholder,
)


class ChartSink:
    """Receives template-function calls on placeholders and writes them as `include` of the helper."""

    def __init__(self, tokens: Tokens):
        self.tokens = tokens

    def express(self, helper: str, function: Callable[..., Any], args: tuple[Any, ...]) -> Optional[Any]:
        if not any(self.holds_placeholder(a) for a in args):
            return None
        if len(args) == 1:
            argument = self.argument(args[0])
        else:
            names = list(inspect.signature(function).parameters)
            argument = "(dict " + " ".join(f'"{self.key(name, value)}" {self.argument(value)}'
                                           for name, value in zip(names, args)) + ")"
        call = f'include "{helper}" {argument}'
        returns = str(inspect.signature(function).return_annotation)
        if returns == "Entries":
            return EntriesPlaceholder(Expr(call, "entries"))
        if returns.startswith("dict"):
            return MapPlaceholder(Expr(f"{call} | fromYaml", "map", call))
        if returns.startswith("list"):
            return ListPlaceholder(Expr(f"{call} | fromYamlArray", "list", call))
        return self.tokens.string(Expr(call, "string"))

    def holds_placeholder(self, value: Any) -> bool:
        if isinstance(value, (ValuesPlaceholder, MapPlaceholder, ListPlaceholder)):
            return True
        if isinstance(value, str):
            return bool(self.tokens.find(value))
        if isinstance(value, int) and not isinstance(value, bool):
            return value in self.tokens.integers
        if isinstance(value, dict):
            return any(self.holds_placeholder(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(self.holds_placeholder(v) for v in value)
        return False

    @staticmethod
    def key(name: str, value: Any) -> str:
        """The helper's argument name: camelCase, and `context` for the root values (`$`)."""
        if isinstance(value, ValuesPlaceholder) and not value.path:
            return "context"
        head, *rest = name.split("_")
        return head + "".join(part.title() for part in rest)

    def argument(self, value: Any) -> str:
        """A Go template operand that evaluates to `value` when the chart renders."""
        if isinstance(value, (ValuesPlaceholder, MapPlaceholder, ListPlaceholder)):
            return value.expr.operand
        if isinstance(value, bool) or value is None:
            return {True: "true", False: "false", None: "nil"}[value]
        if isinstance(value, int):
            return self.tokens.integers[value].operand if value in self.tokens.integers else str(value)
        if isinstance(value, str):
            return self.string_argument(value)
        if isinstance(value, dict):
            return "(dict" + "".join(f" {json.dumps(k)} {self.argument(v)}" for k, v in value.items()) + ")"
        if isinstance(value, (list, tuple)):
            return "(list" + "".join(f" {self.argument(v)}" for v in value) + ")"
        raise TypeError(f"cannot pass {value!r} to a chart helper")

    def string_argument(self, text: str) -> str:
        hits = self.tokens.find(text)
        if not hits:
            return json.dumps(text)
        if len(hits) == 1 and hits[0][:2] == (0, len(text)):
            return hits[0][2].operand
        fmt, operands, at = "", [], 0
        for start, end, expr in hits:
            fmt += text[at:start].replace("%", "%%") + "%v"
            operands.append(expr.operand)
            at = end
        fmt += text[at:].replace("%", "%%")
        return f"(printf {json.dumps(fmt)} {' '.join(operands)})"
