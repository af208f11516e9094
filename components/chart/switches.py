"""Structure from switches: build with every switch on and off, then guard each object and branch its content."""
from __future__ import annotations

import difflib
import itertools
import json
from dataclasses import dataclass
from typing import Any, Iterator

from components.chart.placeholder_values import ChartSink, Tokens, ValuesPlaceholder
from components.cluster.all_objects import cluster_objects
from components.cluster.common.template_functions import building_for
from components.cluster.values_schema import CHART_SWITCH

Identity = tuple[str, str, str, str]  # apiVersion, kind, namespace, name (tokens included)


@dataclass(frozen=True)
class Branch:
    """Map entries or list items that exist only when `condition` holds, else the `otherwise` ones."""

    condition: str
    then: Any
    otherwise: Any


@dataclass(frozen=True)
class BranchKey:
    """The dict key a Branch of map entries sits under."""

    condition: str
    fingerprint: str


@dataclass
class TemplateObject:
    """One object of the chart: its guard (conditions that must all hold) and its content with branches."""

    guard: list[str]
    tree: dict[str, Any]


def is_choice(schema: dict[str, Any]) -> bool:
    """A string of enumerated members that decides structure (a release whose flags differ)."""
    return schema.get("type") == "string" and "enum" in schema and schema.get("$comment", "").startswith(CHART_SWITCH)


def switches_of(schema: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, schema) of every boolean flag, list of enumerated members and choice, in schema order."""
    for key, child in schema.get("properties", {}).items():
        if child.get("type") == "boolean" or (child.get("type") == "array" and "enum" in child["items"]) \
                or is_choice(child):
            yield path + (key,), child
        elif child.get("type") == "object":
            yield from switches_of(child, path + (key,))


def pipeline(path: tuple[str, ...]) -> str:
    return ".Values." + ".".join(path)


def identity(obj: dict[str, Any]) -> Identity:
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]


class Explorer:
    """Every object the builders can produce, with the conditions under which they produce it."""

    def __init__(self, schema: dict[str, Any]):
        self.tokens, self.schema = Tokens(), schema
        found = list(switches_of(schema))
        self.flags = [path for path, s in found if s["type"] == "boolean"]
        self.sets = {path: s["items"]["enum"] for path, s in found if s["type"] == "array"}
        self.choices = {path: list(s["enum"]) for path, s in found if is_choice(s)}

    def build(self, flags: tuple[bool, ...], sets: dict[tuple[str, ...], list[str]],
              combo: tuple[str, ...] | None = None) -> dict[Identity, Any]:
        chosen = dict(zip(self.choices, combo or tuple(members[0] for members in self.choices.values())))
        switches: dict[tuple[str, ...], Any] = {**dict(zip(self.flags, flags)), **sets, **chosen}
        with building_for(ChartSink(self.tokens)):
            objects = cluster_objects(ValuesPlaceholder(self.tokens, self.schema, switches))
        return {identity(o): o for o in objects}

    def objects(self) -> list[TemplateObject]:
        """Objects in first-seen order, guarded by flags, set members and choices, with branches where they differ."""
        full = {path: list(members) for path, members in self.sets.items()}
        combos = list(itertools.product(*self.choices.values()))
        builds = {(flags, combo): self.build(flags, full, combo)
                  for flags in itertools.product((False, True), repeat=len(self.flags)) for combo in combos}
        members = self.member_guards(builds[((True,) * len(self.flags), combos[0])], full)
        order = list(dict.fromkeys(key for built in builds.values() for key in built))
        result = []
        for key in order:
            present = {build: built[key] for build, built in builds.items() if key in built}
            flag_sets, combo_set = {f for f, _ in present}, {c for _, c in present}
            if len(present) != len(flag_sets) * len(combo_set):
                raise ValueError(f"{key} exists under flags that depend on the choices; not expressible")
            fixed = self.cube(key, flag_sets)
            free = [i for i in range(len(self.flags)) if i not in fixed]
            guard = [pipeline(self.flags[i]) if on else f"not {pipeline(self.flags[i])}" for i, on in fixed.items()]
            per_flags = {f: self.merge_choices(key, {c: t for (g, c), t in present.items() if g == f}) for f in flag_sets}
            result.append(TemplateObject(guard + self.choice_guards(key, combo_set) + members.get(key, []),
                                         self.merge_over(per_flags, free)))
        return result

    def choice_guards(self, key: Identity, combos: set[tuple[str, ...]]) -> list[str]:
        """`has <choice> (list ...)` for each choice the object exists under only some members of."""
        guards, count = [], 1
        for i, (path, members) in enumerate(self.choices.items()):
            present = [m for m in members if any(c[i] == m for c in combos)]
            count *= len(present)
            if len(present) != len(members):
                guards.append(f"has {pipeline(path)} (list {' '.join(json.dumps(m) for m in present)})")
        if count != len(combos):
            raise ValueError(f"{key} exists under no product of choice members; not expressible")
        return guards

    def merge_choices(self, key: Identity, trees: dict[tuple[str, ...], Any], index: int = 0) -> Any:
        """One tree with a Branch `eq <choice> "<member>"` wherever members of a choice build it differently."""
        if index == len(self.choices):
            (tree,) = trees.values()
            return tree
        path, members = list(self.choices.items())[index]
        by_member: dict[str, dict[tuple[str, ...], Any]] = {}
        for combo, tree in trees.items():
            by_member.setdefault(combo[index], {})[combo] = tree
        merged = {m: self.merge_choices(key, sub, index + 1) for m, sub in by_member.items()}
        present = [m for m in members if m in merged]
        tree = merged[present[-1]]
        for member in reversed(present[:-1]):
            tree = merge_pair(tree, merged[member], f"eq {pipeline(path)} {json.dumps(member)}")
        return tree

    def member_guards(self, everything: dict[Identity, Any], full: dict[tuple[str, ...], list[str]]
                      ) -> dict[Identity, list[str]]:
        """`has "<member>" <set>` for the objects that exist only when that member is in its set."""
        guards: dict[Identity, list[str]] = {}
        for path, members in full.items():
            for member in members:
                without = self.build((True,) * len(self.flags), {**full, path: [m for m in members if m != member]})
                for key, obj in everything.items():
                    if key not in without:
                        guards.setdefault(key, []).append(f'has {json.dumps(member)} {pipeline(path)}')
                    elif without[key] != obj:
                        raise ValueError(f"{key} changes with the members of {pipeline(path)}; not expressible")
        return guards

    def cube(self, key: Identity, present: set[tuple[bool, ...]]) -> dict[int, bool]:
        """The flags every build holding the object agrees on; they must describe exactly those builds."""
        fixed = {i: next(iter(present))[i] for i in range(len(self.flags)) if len({f[i] for f in present}) == 1}
        if len(present) != 2 ** (len(self.flags) - len(fixed)):
            raise ValueError(f"{key} exists under no conjunction of {self.flags}; not expressible")
        return fixed

    def merge_over(self, trees: dict[tuple[bool, ...], Any], free: list[int]) -> Any:
        """One tree with a Branch wherever the content differs between a free flag off and on."""
        if not free:
            first, *others = trees.values()
            assert all(t == first for t in others)
            return first
        flag, rest = free[0], free[1:]
        off = self.merge_over({f: t for f, t in trees.items() if not f[flag]}, rest)
        on = self.merge_over({f: t for f, t in trees.items() if f[flag]}, rest)
        return merge_pair(off, on, pipeline(self.flags[flag]))


def merge_pair(off: Any, on: Any, condition: str) -> Any:
    """`off` and `on` as one tree; differences become Branches on `condition`."""
    if off == on:
        return off
    if isinstance(off, dict) and isinstance(on, dict):
        return merge_maps(off, on, condition)
    if isinstance(off, list) and isinstance(on, list):
        return merge_lists(off, on, condition)
    raise ValueError("no common structure")


def _branch_entries(then: dict[Any, Any], otherwise: dict[Any, Any], condition: str) -> dict[Any, Any]:
    branch = Branch(condition, then, otherwise)
    return {BranchKey(condition, repr(branch)): branch}


def merge_maps(off: dict[Any, Any], on: dict[Any, Any], condition: str) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    off_keys, on_keys = list(off), list(on)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, off_keys, on_keys, autojunk=False).get_opcodes():
        if op != "equal":
            merged.update(_branch_entries({k: on[k] for k in on_keys[j1:j2]}, {k: off[k] for k in off_keys[i1:i2]},
                                          condition))
            continue
        for key in off_keys[i1:i2]:
            try:
                merged[key] = merge_pair(off[key], on[key], condition)
            except ValueError:
                merged.update(_branch_entries({key: on[key]}, {key: off[key]}, condition))
    return merged


def merge_lists(off: list[Any], on: list[Any], condition: str) -> list[Any]:
    merged: list[Any] = []
    matcher = difflib.SequenceMatcher(None, [repr(i) for i in off], [repr(i) for i in on], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            merged += off[i1:i2]
            continue
        if op == "replace" and i2 - i1 == j2 - j1 and all(isinstance(x, dict) for x in off[i1:i2] + on[j1:j2]):
            merged += [merge_pair(a, b, condition) for a, b in zip(off[i1:i2], on[j1:j2])]
            continue
        merged.append(Branch(condition, on[j1:j2], off[i1:i2]))
    return merged
