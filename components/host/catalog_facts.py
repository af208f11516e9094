"""The release catalog's installer facts, and the parameters' usual values, as tables in the install and verify
scripts, not in every node's command.

A parameter declared with `by` (parameters.py) is decided by the catalog alone, from the values of the parameters it
names: an installer's flags by its version (the runtime's by the engine), the runtime's answer and record by its
release, the OS lists by the chip and arch. The scripts carry every catalogued value and look up the node's
(catalog.sh), so the state holds them in no command; the table changes only with the catalog, which changes the
scripts' SHA-256 and so the commands that run them.
"""
from __future__ import annotations

import shlex
from typing import Callable

from components.config.hosts import Arch, Chip, ContainerRuntime
from components.config.packages import Kind
from components.host.os_support import listed, lists_for
from components.host.parameters import (
    CATALOG_FACTS,
    DEFAULTS,
    INSTALLER_CATALOG,
    PARAMETERS,
    RUNS_WITH,
    installer_flags,
    kind_prefix,
    step_names,
)
from components.releases.catalog import component_releases, release_entry


def runtime_record_version(release: str) -> str:
    """The `version=` value the runtime's installer records for RELEASE (`v6.0.0`), from the release catalog."""
    lines = release_entry("docker-runtime", release).installer.record.lines
    line = next(line for line in lines if line.startswith("version="))
    return line.partition("=")[2].format(version=release)


def runtime_answer(release: str) -> str:
    """What the runtime's installer of RELEASE is answered on stdin (the release catalog's prompt), or nothing."""
    prompt = release_entry("docker-runtime", release).installer.stdin_prompt
    return prompt.answer if prompt else ""


# What a key part is when the parameter it is read from has no catalogued value: the fallback entry.
ANY = "*"
Table = dict[tuple[str, ...], str]


def _flags(kind: Kind, action: str) -> Table:
    if kind is Kind.DOCKER_RUNTIME:
        return {(engine.value,): installer_flags(kind, "", engine.value)[action] for engine in ContainerRuntime}
    releases = component_releases(INSTALLER_CATALOG[kind])
    table: Table = {(release.lower(),): installer_flags(kind, release, "")[action] for release in releases}
    # installer_flags: a release the catalog does not list takes its newest one's flags.
    return {**table, (ANY,): installer_flags(kind, "", "")[action]}


def _runtime(read: Callable[[str], str]) -> Table:
    return {(release.lower(),): read(release) for release in component_releases("docker-runtime")}


def table(name: str) -> Table:
    """Every value of the catalog parameter NAME, by the lower-case values of the parameters it is looked up by."""
    if name == "ASCEND_OS_LISTS":
        return {(chip.value.lower(),): "; ".join(found.title for found in lists_for(chip.value)) for chip in Chip}
    if name == "ASCEND_OS_LISTED":
        return {(chip.value.lower(), arch.value): " ".join(listed(chip.value, arch.value))
                for chip in Chip for arch in Arch}
    if name == "ASCEND_DOCKER_RUNTIME_RECORD":
        return _runtime(runtime_record_version)
    for kind in Kind:
        prefix = f"ASCEND_{kind_prefix(kind)}_"
        if name == f"{prefix}ANSWER":
            return _runtime(runtime_answer) if kind is Kind.DOCKER_RUNTIME else {(): ""}
        for action in ("fresh", "upgrade", "uninstall"):
            if name == f"{prefix}{action.upper()}_FLAGS":
                return _flags(kind, action)
    raise KeyError(f"{name} is no parameter of the release catalog")


def render(step: str) -> str:
    """The shell lines that set CATALOG_BY (what each of STEP's catalog parameters is looked up by), CATALOG (its
    values, keyed `NAME|part|...`) and DEFAULTS (the usual value of each parameter a command leaves out when it has
    it); empty for a step that has none, or that runs with what another step recorded (the uninstall: the
    parameters of the install it undoes)."""
    if step in RUNS_WITH:
        return ""
    names = [p for p in PARAMETERS if p.name in set(step_names(step)) & CATALOG_FACTS]
    usual = [name for name in step_names(step) if name in DEFAULTS]
    lines = []
    if names:
        by = " ".join(f"[{p.name}]={shlex.quote(' '.join(p.by or ()))}" for p in names)
        values = "\n".join(f"  [{shlex.quote('|'.join((p.name, *key)))}]={shlex.quote(value)}"
                           for p in names for key, value in table(p.name).items())
        lines += [f"declare -A CATALOG_BY=({by})", f"declare -A CATALOG=(\n{values}\n)"]
    if usual:
        lines.append("declare -A DEFAULTS=(" + " ".join(f"[{n}]={shlex.quote(DEFAULTS[n])}" for n in usual) + ")")
    return "".join(f"{line}\n" for line in lines)
