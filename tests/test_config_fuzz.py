"""Random shapes of every config section, and random damage to a stack file's text: the answer is always a
StackSpec, problems (SpecError) or a stack-file error, never another exception. Bounded by count, seeded."""
from __future__ import annotations

import copy
import random

import pytest

from components.config import CONFIG_KEYS, SpecError, parse_stack
from components.config.config_source import spec_from_values
from components.plan.stack_files import StackFileError, read_stack_config
from tests.conftest import run_stack_file
from tests.stacks import ROOT, load_stack

SECTIONS = [k.name for k in CONFIG_KEYS if not k.secret]
WEIRD_TEXT = ["", " ", "0110", "yes", "-1", "1e3", "latest", "::ffff:10.20.0.11", "fe80::1%$(id)", "/", "..",
              "system:unauthenticated", "kube-system", "a" * 300, "-----BEGIN RSA PRIVATE KEY-----", "\n", "ü", "*",
              "https://u:p@host/x", "ssh-ed25519 AAAA", "{secure: x}", "[secret]", "dev-npu-01", "910B", "mirror"]


def random_value(rng: random.Random, depth: int = 0):
    """Any JSON value a stack could carry after the CLI read it."""
    choice = rng.randrange(9 if depth < 3 else 5)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 1, 8, 65536, 2**63, 1.5, -0.0, 1e300])
    if choice in (3, 4):
        return rng.choice(WEIRD_TEXT)
    if choice in (5, 6):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = WEIRD_TEXT[:6] + ["name", "address", "hostKey", "pool", "chip", "source", "files", "image", "canaries",
                             "group", "enabled", "secure", "repository", "tag", "bastion", "user", "port"]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def mutate(rng: random.Random, value, depth: int = 0):
    """The value with one random part replaced, removed, wrapped or emptied."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        out = dict(value)
        roll = rng.random()
        if roll < 0.2:
            del out[key]
        else:
            out[key] = mutate(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.7:
        out = list(value)
        i = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.2:
            out.append(copy.deepcopy(out[i]))
        else:
            out[i] = mutate(rng, out[i], depth + 1)
        return out
    return rng.choice([random_value(rng), [value], {"x": value}, {}, [], str(value)])


def raw_sections(stack: str) -> dict:
    return {k.split(":", 1)[1]: v for k, v in load_stack(stack)["config"].items() if k.startswith("ascend-npu:")}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_random_shapes_of_every_section_end_in_problems(stack: str):
    rng = random.Random(f"sections-{stack}")
    base = raw_sections(stack)
    outcomes = {"spec": 0, "problems": 0}
    for _ in range(1500):
        raw = copy.deepcopy(base)
        for _ in range(rng.randrange(1, 4)):
            section = rng.choice(SECTIONS)
            raw[section] = random_value(rng) if rng.random() < 0.3 else mutate(rng, raw.get(section, {}))
        try:
            parse_stack(raw, private_key=None if raw.get("ssh", {}) else "[secret]")
            outcomes["spec"] += 1
        except SpecError as exc:
            outcomes["problems"] += 1
            assert all(len(str(p)) < 700 for p in exc.problems), exc
    assert outcomes["problems"] > 1000 and outcomes["spec"] > 0, outcomes


def damaged_texts(rng: random.Random, text: str, count: int):
    """The stack file's text with lines duplicated, dropped, re-indented or cut, and characters changed."""
    lines = text.splitlines()
    for _ in range(count):
        out = list(lines)
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(out))
            roll = rng.random()
            if roll < 0.25:
                out.insert(i, out[i])
            elif roll < 0.4:
                del out[i]
            elif roll < 0.55:
                out[i] = " " * rng.randrange(0, 8) + out[i].lstrip()
            elif roll < 0.7:
                out[i] = out[i][:rng.randrange(len(out[i]) + 1)]
            else:
                pos = rng.randrange(len(out[i]) + 1)
                out[i] = out[i][:pos] + rng.choice(["&a ", "*a", "- ", ": ", "{", "]", "'", "0", "!!str ", "\t",
                                                     "<<: *a", "yes", ".nan", "%"]) + out[i][pos:]
        yield "\n".join(out) + "\n"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_damaged_stack_files_end_in_problems(stack: str, tmp_path):
    rng = random.Random(f"text-{stack}")
    text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
    path = tmp_path / "Pulumi.case.yaml"
    counts = {"file": 0, "spec": 0, "problems": 0}
    planned = 0
    for damaged in damaged_texts(rng, text, 400):
        path.write_text(damaged)
        try:
            config = read_stack_config(ROOT, "case", path)
        except StackFileError as exc:
            counts["file"] += 1
            assert "Traceback" not in str(exc) and len(str(exc)) < 8000
            continue
        try:
            spec_from_values(config.values, config.secret_keys)
            counts["spec"] += 1
        except SpecError:
            counts["problems"] += 1
            continue
        if planned < 5:  # the whole program, for a few of the damaged files it accepts
            planned += 1
            try:
                run_stack_file(path)
            except SpecError:
                pass
    assert counts["file"] > 50 and counts["problems"] > 50, counts
