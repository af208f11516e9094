"""MindCluster release sets (mindcluster.yaml beside the pack): each release's components and its CANN and HDK lines."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import yaml

SETS_FILE = Path(__file__).resolve().parents[1] / "mindcluster.yaml"
COMPONENTS = ("devicePlugin", "npuExporter", "dockerRuntime")
RULE = "MindCluster's components go together as one release, never mixed across releases (its release notes)"
WORDS = {"devicePlugin": "device plugin", "npuExporter": "NPU exporter", "dockerRuntime": "Ascend Docker Runtime"}


def on_line(version: str, line: str) -> bool:
    """`8.5.0` and `8.5.1` are on line `8.5` (the tables' `8.5.X`); `8.50.0` is not."""
    return version.lower().startswith(line.lower() + ".")


@dataclass(frozen=True)
class ReleaseSet:
    """One MindCluster release: its components, its own CANN and HDK, the lines it works with, and their source."""

    release: str
    components: tuple[tuple[str, str], ...]
    paired_cann: str
    paired_hdk: str
    cann: tuple[str, ...]
    hdk: tuple[str, ...]
    source: str
    inferred: bool

    def component(self, name: str) -> str:
        return dict(self.components)[name]

    def tables(self) -> str:
        """The documented lines, as a message names them."""
        return (f"MindCluster {self.release} works with CANN {', '.join(c + '.X' for c in self.cann)} and HDK "
                f"{', '.join(h + '.X' for h in self.hdk)} (its own pair: CANN {self.paired_cann}, HDK "
                f"{self.paired_hdk})")

    def version_problem(self, driver: str, cann: str) -> Optional[str]:
        """None when the driver's HDK and the CANN are on this release's lines; otherwise what is off them."""
        off = []
        if not any(on_line(cann, line) for line in self.cann):
            off.append(f"CANN {cann}")
        if not any(on_line(driver, line) for line in self.hdk):
            off.append(f"driver {driver} (HDK {driver})")
        if not off:
            return None
        return f"{' and '.join(off)} {'is' if len(off) == 1 else 'are'} outside MindCluster {self.release}'s " \
               f"tables: {self.tables()}"


@dataclass(frozen=True)
class ReleaseSets:
    """Every catalogued MindCluster release, in file order."""

    sets: tuple[ReleaseSet, ...]

    def names(self) -> list[str]:
        return [s.release for s in self.sets]

    def get(self, release: str) -> Optional[ReleaseSet]:
        return next((s for s in self.sets if s.release == release), None)

    def of_component(self, name: str, release: str) -> Optional[ReleaseSet]:
        """The set that ships this release of a component (`devicePlugin`, `v26.1.0`), or None."""
        return next((s for s in self.sets if s.component(name).lower() == release.lower()), None)


@lru_cache(maxsize=None)
def load_sets(path: Path = SETS_FILE) -> ReleaseSets:
    """Read the sets file once."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))["sets"]
    return ReleaseSets(tuple(
        ReleaseSet(str(name), tuple((c, str(entry["components"][c])) for c in COMPONENTS),
                   str(entry["paired"]["cann"]), str(entry["paired"]["hdk"]),
                   tuple(str(c) for c in entry["cann"]), tuple(str(h) for h in entry["hdk"]),
                   " ".join(str(entry["tables"]["source"]).split()), bool(entry["tables"]["inferred"]))
        for name, entry in data.items()))
