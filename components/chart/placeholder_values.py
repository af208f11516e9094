"""Placeholder values: the builders run on tokens that stand for `.Values` paths and helper calls."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterator

STRING_TOKEN = re.compile(r"xTOK(\d{4})x")
INTEGER_BASE = 97000
# Integer tokens are short so that text a builder folds at a width (PyYAML) folds as the real value would.
INTEGER_TOKEN = re.compile(r"(?<![0-9.])97\d{3}(?![0-9])")


GO_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def values_pipeline(path: tuple[str, ...]) -> str:
    """`.Values.a.b`, or `(index .Values "jobs" "910B")` where a key is no Go field name (a chip type)."""
    if all(GO_FIELD.match(key) for key in path):
        return ".Values." + ".".join(path)
    return "(index .Values " + " ".join(json.dumps(key) for key in path) + ")"


@dataclass(frozen=True)
class Expr:
    """A Helm pipeline and what it yields; maps and lists made by a helper also have their YAML pipeline."""

    pipeline: str
    kind: str
    yaml_pipeline: str = ""

    @property
    def operand(self) -> str:
        """The pipeline as an argument of a function or another pipeline."""
        return f"({self.pipeline})" if " " in self.pipeline else self.pipeline


class Tokens:
    """The same expression gets the same token in every build, so objects line up across builds."""

    def __init__(self) -> None:
        self.strings: dict[str, Expr] = {}
        self.integers: dict[int, Expr] = {}
        self._known: dict[Expr, str | int] = {}

    def _next(self) -> int:
        if len(self._known) >= 1000:
            raise ValueError("more than 1000 placeholders: widen STRING_TOKEN and INTEGER_TOKEN")
        return len(self._known)

    def string(self, expr: Expr) -> str:
        if expr not in self._known:
            self._known[expr] = f"xTOK{self._next():04d}x"
            self.strings[self._known[expr]] = expr
        return self._known[expr]  # type: ignore[return-value]

    def integer(self, expr: Expr) -> int:
        if expr not in self._known:
            self._known[expr] = INTEGER_BASE + self._next()
            self.integers[self._known[expr]] = expr  # type: ignore[index]
        return self._known[expr]  # type: ignore[return-value]

    def leftovers(self, text: str) -> list[Expr]:
        """Expressions whose token survives in written text: a builder formatted it (padded, split) unseen."""
        # Case-blind and without the x fences: `.upper()` or a slice of a token must not slip through either.
        left = [self.strings[f"xTOK{n}x"] for n in re.findall(r"(?i)tok(\d{4})", text) if f"xTOK{n}x" in self.strings]
        # Any run of the issued digits counts, even inside a longer number: `f"{port:06d}"` gives 097003.
        left += [self.integers[int(t)] for t in re.findall(r"97\d{3}", text) if int(t) in self.integers]
        return list(dict.fromkeys(left))

    def find(self, text: str) -> list[tuple[int, int, Expr]]:
        """(start, end, expression) of every token in `text`, in order."""
        found = [(m.start(), m.end(), self.strings[m.group(0)]) for m in STRING_TOKEN.finditer(text)]
        found += [(m.start(), m.end(), self.integers[int(m.group(0))]) for m in INTEGER_TOKEN.finditer(text)
                  if int(m.group(0)) in self.integers]
        return sorted(found, key=lambda hit: hit[0])


@dataclass(frozen=True)
class MergeKey:
    """The key a placeholder map sits under once unpacked into a dict (`{**values["nodeSelector"], ...}`)."""

    expr: Expr


class MapPlaceholder(Mapping):
    """A map only the release knows: a free-form value or a helper's result."""

    def __init__(self, expr: Expr):
        self.expr = expr

    def __getitem__(self, key: Any) -> Any:
        if key == MergeKey(self.expr):
            return self
        raise KeyError(f"{key!r}: keys of {self.expr.pipeline} are known only when the chart renders")

    def __iter__(self) -> Iterator[MergeKey]:
        yield MergeKey(self.expr)

    def __len__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapPlaceholder) and other.expr == self.expr

    def __hash__(self) -> int:
        return hash(self.expr)

    def __repr__(self) -> str:
        return f"MapPlaceholder({self.expr.pipeline!r})"


@dataclass(frozen=True)
class SpliceKey:
    """The key a helper's entries sit under once unpacked into a mapping: written among that mapping's entries."""

    expr: Expr


class EntriesPlaceholder(MapPlaceholder):
    """Entries a helper adds to the mapping it is unpacked into (`{**spec, **f(values)}`), maybe none."""

    def __getitem__(self, key: Any) -> Any:
        if key == SpliceKey(self.expr):
            return self
        raise KeyError(f"{key!r}: the entries of {self.expr.pipeline} are known only when the chart renders")

    def __iter__(self) -> Iterator[SpliceKey]:  # type: ignore[override]
        yield SpliceKey(self.expr)


class ListPlaceholder:
    """A list only the release knows; unpacked into another list it splices itself in as one item."""

    def __init__(self, expr: Expr):
        self.expr = expr

    def __iter__(self) -> Iterator["ListPlaceholder"]:
        yield self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListPlaceholder) and other.expr == self.expr

    def __hash__(self) -> int:
        return hash(self.expr)

    def __repr__(self) -> str:
        return f"ListPlaceholder({self.expr.pipeline!r})"


class ValuesPlaceholder(Mapping):
    """`.Values` (or one section) with the switches set and every other leaf a token."""

    def __init__(self, tokens: Tokens, schema: dict[str, Any], switches: dict[tuple[str, ...], Any],
                 path: tuple[str, ...] = ()):
        self.tokens, self.schema, self.switches, self.path = tokens, schema, switches, path
        self.expr = Expr(values_pipeline(path) if path else "$", "map")

    def __getitem__(self, key: str) -> Any:
        schema, path = self.schema["properties"][key], self.path + (key,)
        if path in self.switches:
            return self.switches[path]
        kinds = schema.get("type")
        expr = Expr(values_pipeline(path), "")
        if kinds == "object" and "properties" in schema:
            return ValuesPlaceholder(self.tokens, schema, self.switches, path)
        if kinds == "object":
            return MapPlaceholder(Expr(expr.pipeline, "map"))
        if kinds == "array" and "enum" not in schema["items"]:
            return ListPlaceholder(Expr(expr.pipeline, "list"))
        if kinds == "integer":
            return self.tokens.integer(Expr(expr.pipeline, "integer"))
        if kinds in ("boolean", "array"):
            raise KeyError(f"{'.'.join(path)} decides structure; it must be a switch of the build")
        return self.tokens.string(Expr(expr.pipeline, "string"))

    def __iter__(self) -> Iterator[str]:
        return iter(self.schema["properties"])

    def __len__(self) -> int:
        return len(self.schema["properties"])
