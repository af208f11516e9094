"""Read the release catalog: one YAML file per component, one entry per release, each naming its source."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

CATALOG_DIR = Path(__file__).parent
SOURCE_KEYS = ("repository", "tag", "paths")
# libyaml's loader where PyYAML has it: the catalog is read on every plan, and the pure-Python one takes 10x longer.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UnknownRelease(LookupError):
    """A component release the catalog has no entry for."""

    def __init__(self, component: str, release: str, known: list[str]):
        self.component, self.release, self.known = component, release, known
        super().__init__(f"{component} {release!r} is not in the release catalog; known releases: "
                         f"{', '.join(known) or 'none'}")


def _checked(component: str, data: Any) -> dict[str, dict[str, Any]]:
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict) or not releases:
        raise ValueError(f"{component}.yaml: expected a mapping 'releases: {{<release>: {{...}}}}'")
    for release, entry in releases.items():
        source = entry.get("source") if isinstance(entry, dict) else None
        missing = [k for k in SOURCE_KEYS if not (isinstance(source, dict) and source.get(k))]
        if missing:
            raise ValueError(f"{component}.yaml: release {release} has no source {', '.join(missing)}")
    return releases


@lru_cache(maxsize=None)
def component_releases(component: str) -> dict[str, dict[str, Any]]:
    """Every catalogued release of `component` (file `<component>.yaml` beside this module)."""
    path = CATALOG_DIR / f"{component}.yaml"
    return _checked(component, yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER))


def known_releases(component: str) -> list[str]:
    """The releases of `component` the catalog describes, in file order."""
    return list(component_releases(component))


def release_entry(component: str, release: str) -> dict[str, Any]:
    """The catalog entry of one release; `UnknownRelease` lists the known ones when there is none."""
    releases = component_releases(component)
    if release not in releases:
        raise UnknownRelease(component, release, list(releases))
    return releases[release]
