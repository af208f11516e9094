"""The OS lists of components/releases/os-support.yaml, as the install step's preflight reads them for one node."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from components.config.hosts import Arch, Chip

CATALOG = Path(__file__).resolve().parents[1] / "releases" / "os-support.yaml"
# ID/VERSION_ID[/CODENAME] as os-release writes them: letters, digits, dots, dashes and underscores, no spaces.
MATCH = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?$")
CHIPS = {chip.value for chip in Chip}
ARCHES = {arch.value for arch in Arch}


class CatalogError(ValueError):
    """os-support.yaml says something the check cannot use."""


@dataclass(frozen=True)
class System:
    """One system of a list: its name as the source gives it, its os-release match (or None), its architectures."""

    os: str
    match: str | None
    arch: tuple[str, ...]


@dataclass(frozen=True)
class OsList:
    """One source's list: its title, the chips its hardware takes, its systems."""

    title: str
    chips: tuple[str, ...]
    systems: tuple[System, ...]


def _system(where: str, raw: object) -> System:
    if not isinstance(raw, dict) or not isinstance(raw.get("os"), str) or not raw["os"].strip():
        raise CatalogError(f"{where}: a system needs `os`, its name as the source gives it")
    match, arch = raw.get("match"), tuple(raw.get("arch") or ARCHES)
    if match is not None and not (isinstance(match, str) and MATCH.match(match)):
        raise CatalogError(f"{where}: {raw['os']}: match {match!r} is not ID/VERSION_ID[/CODENAME]")
    if not set(arch) <= ARCHES:
        raise CatalogError(f"{where}: {raw['os']}: arch {list(arch)} names no known architecture")
    return System(raw["os"], match, tuple(sorted(arch)))


def _list(index: int, raw: object) -> OsList:
    where = f"os-support.yaml lists[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("title"), str):
        raise CatalogError(f"{where}: a list needs a title")
    source = raw.get("source")
    if not isinstance(source, dict) or not (source.get("url") or source.get("commit")):
        raise CatalogError(f"{where} ({raw['title']}): its source needs a url or a commit")
    chips = tuple(str(chip) for chip in raw.get("chips") or ())
    if not chips or not set(chips) <= CHIPS or not raw.get("chips_from"):
        raise CatalogError(f"{where} ({raw['title']}): chips {list(chips)} must be known chips, with chips_from")
    systems = tuple(_system(f"{where} ({raw['title']})", system) for system in raw.get("systems") or ())
    if not systems:
        raise CatalogError(f"{where} ({raw['title']}): no systems")
    return OsList(raw["title"], chips, systems)


def parse(text: str) -> tuple[OsList, ...]:
    """Every list of an os-support.yaml text; CatalogError names what is wrong."""
    data = yaml.safe_load(text)
    lists = data.get("lists") if isinstance(data, dict) else None
    if not isinstance(lists, list) or not lists:
        raise CatalogError("os-support.yaml: expected `lists:`, a list of OS lists")
    return tuple(_list(i, raw) for i, raw in enumerate(lists))


@lru_cache(maxsize=None)
def os_lists(path: Path = CATALOG) -> tuple[OsList, ...]:
    """The catalog's lists, read once per run."""
    return parse(path.read_text(encoding="utf-8"))


def lists_for(chip: str, lists: tuple[OsList, ...] | None = None) -> tuple[OsList, ...]:
    """The lists whose hardware takes CHIP."""
    return tuple(found for found in (lists or os_lists()) if chip in found.chips)


def listed(chip: str, arch: str, lists: tuple[OsList, ...] | None = None) -> list[str]:
    """The os-release matches on CHIP's lists for ARCH, lower case, each once, sorted."""
    return sorted({system.match.lower() for found in lists_for(chip, lists) for system in found.systems
                   if system.match and arch in system.arch})

