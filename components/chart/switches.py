"""Structure from switches: builds around all flags on and all off, one flipped at a time; guard and branch objects."""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, Iterator

from components.chart.branches import merge_pair
from components.chart.chart_sink import ChartSink
from components.chart.placeholder_values import Tokens, ValuesPlaceholder
from components.cluster.all_objects import cluster_objects
from components.cluster.common.template_functions import building_for
from components.cluster.values_schema import CHART_SWITCH

Identity = tuple[str, str, str, str]  # apiVersion, kind, namespace, name (tokens included)


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
        """Each object from the builds around where it first appears: only the flags it reacts to are combined."""
        full = {path: list(members) for path, members in self.sets.items()}
        combos = list(itertools.product(*self.choices.values()))
        cache: dict[tuple[bool, ...], dict[tuple[str, ...], dict[Identity, Any]]] = {}

        def around(flags: tuple[bool, ...]) -> dict[tuple[str, ...], dict[Identity, Any]]:
            if flags not in cache:
                cache[flags] = {combo: self.build(flags, full, combo) for combo in combos}
            return cache[flags]

        homes: dict[Identity, tuple[bool, ...]] = {}  # the first build each object appeared in

        def note(flags: tuple[bool, ...]) -> None:
            for built in around(flags).values():
                for key in built:
                    homes.setdefault(key, flags)

        base = (True,) * len(self.flags)
        for start in (base, (False,) * len(self.flags)):  # all on, all off, and each with one flag flipped
            for flags in [start] + [flipped(start, i) for i in range(len(self.flags))]:
                note(flags)
        members = self.member_guards(around(base), full)
        result, queue = [], list(homes)
        for key in queue:  # grows when an object turns up only under several flags flipped together
            home = homes[key]
            seen = [built.get(key) for built in around(home).values()]
            reacts = [i for i in range(len(self.flags))
                      if [built.get(key) for built in around(flipped(home, i)).values()] != seen]
            builds = {(flags, combo): built for flags in settings(home, reacts)
                      for combo, built in around(flags).items()}
            result.append(self.template_object(key, builds, reacts, members.get(key, [])))
            for flags in [*settings(home, reacts), *(flipped(home, i) for i in range(len(self.flags)))]:
                note(flags)
            queue += [other for other in homes if other not in queue]
        return result

    def every_combination(self) -> list[TemplateObject]:
        """The objects from a build of every combination of the switches: what `objects` must equal."""
        full = {path: list(members) for path, members in self.sets.items()}
        combos = list(itertools.product(*self.choices.values()))
        builds = {(flags, combo): self.build(flags, full, combo)
                  for flags in itertools.product((False, True), repeat=len(self.flags)) for combo in combos}
        base = (True,) * len(self.flags)
        members = self.member_guards({combo: builds[(base, combo)] for combo in combos}, full)
        order = list(dict.fromkeys(key for built in builds.values() for key in built))
        return [self.template_object(key, builds, list(range(len(self.flags))), members.get(key, [])) for key in order]

    def template_object(self, key: Identity, builds: dict[tuple[tuple[bool, ...], tuple[str, ...]], Any],
                        over: list[int], members: list[str]) -> TemplateObject:
        """The object guarded by the flags in `over` that all its builds agree on, branched on the others."""
        present = {build: built[key] for build, built in builds.items() if key in built}
        flag_sets, combo_set = {f for f, _ in present}, {c for _, c in present}
        if len(present) != len(flag_sets) * len(combo_set):
            raise ValueError(f"{key} exists under flags that depend on the choices; not expressible")
        fixed = self.cube(key, flag_sets, over)
        free = [i for i in over if i not in fixed]
        guard = [pipeline(self.flags[i]) if on else f"not {pipeline(self.flags[i])}" for i, on in fixed.items()]
        per_flags = {f: self.merge_choices(key, {c: t for (g, c), t in present.items() if g == f}) for f in flag_sets}
        return TemplateObject(guard + self.choice_guards(key, combo_set) + members, self.merge_over(per_flags, free))

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

    def member_guards(self, everything: dict[tuple[str, ...], dict[Identity, Any]],
                      full: dict[tuple[str, ...], list[str]]) -> dict[Identity, list[str]]:
        """`has "<member>" <set>` for the objects that exist only when that member is in its set, under every
        combination of the choices that builds them (`everything`: the build of each, all flags on)."""
        found: dict[Identity, dict[str, bool]] = {}  # guard -> whether it is needed, per choice combination
        for path, members in full.items():
            for member in members:
                guard = f'has {json.dumps(member)} {pipeline(path)}'
                for combo, built in everything.items():
                    without = self.build((True,) * len(self.flags), {**full, path: [m for m in members if m != member]},
                                         combo)
                    for key, obj in built.items():
                        if key in without and without[key] != obj:
                            raise ValueError(f"{key} changes with the members of {pipeline(path)}; not expressible")
                        needed = found.setdefault(key, {}).setdefault(guard, key not in without)
                        if needed != (key not in without):
                            raise ValueError(f"{key} needs {guard} under some choices only; not expressible")
        return {key: [guard for guard, needed in guards.items() if needed] for key, guards in found.items()}

    def cube(self, key: Identity, present: set[tuple[bool, ...]], over: list[int]) -> dict[int, bool]:
        """The flags of `over` every build holding the object agrees on; they must describe exactly those builds."""
        fixed = {i: next(iter(present))[i] for i in over if len({f[i] for f in present}) == 1}
        if len(present) != 2 ** (len(over) - len(fixed)):
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


def flipped(flags: tuple[bool, ...], index: int) -> tuple[bool, ...]:
    return flags[:index] + (not flags[index],) + flags[index + 1:]


def settings(home: tuple[bool, ...], over: list[int]) -> list[tuple[bool, ...]]:
    """`home` with the flags of `over` set every way."""
    result = []
    for values in itertools.product((False, True), repeat=len(over)):
        flags = list(home)
        for index, value in zip(over, values):
            flags[index] = value
        result.append(tuple(flags))
    return result
