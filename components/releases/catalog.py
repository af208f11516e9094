"""Read the release catalog: one YAML file per component, one entry per release, each checked by its kind's model."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from components.releases.entries import CatalogModel, DevicePlugin, NpuExporter
from components.releases.installers import Cann, CannImages, DockerRuntime, Installer, NpuDriver, NpuFirmware

CATALOG_DIR = Path(__file__).parent
# libyaml's loader where PyYAML has it: the catalog is read on every plan, and the pure-Python one takes 10x longer.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KINDS: dict[str, type[CatalogModel]] = {
    "device-plugin": DevicePlugin, "npu-exporter": NpuExporter, "docker-runtime": DockerRuntime,
    "npu-driver": NpuDriver, "npu-firmware": NpuFirmware, "cann": Cann, "cann-images": CannImages,
}
# The catalog file of each installer kind (the package kinds of components/config/packages.py): CANN's toolkit and
# kernels packages share cann.yaml.
INSTALLER_COMPONENTS = {"driver": "npu-driver", "firmware": "npu-firmware", "toolkit": "cann", "kernels": "cann",
                        "dockerRuntime": "docker-runtime"}
PROBLEMS = {"missing": "missing (every entry of this kind needs it)", "extra_forbidden": "not a field of this kind"}


class CatalogError(ValueError):
    """A catalog file or entry its kind's model refuses; the message names the file, the release and the field."""


class UnknownRelease(LookupError):
    """A component release the catalog has no entry for."""

    def __init__(self, component: str, release: str, known: list[str]):
        self.component, self.release, self.known = component, release, known
        super().__init__(f"{component} {release!r} is not in the release catalog; known releases: "
                         f"{', '.join(known) or 'none'}")


def _problems(error: ValidationError) -> list[str]:
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "(the entry)"
        words = PROBLEMS.get(problem["type"], problem["msg"])
        given = "" if problem["type"] == "missing" else f" (given: {problem['input']!r:.60})"
        lines.append(f"{field}: {words}{given}")
    return lines


def parse_releases(component: str, text: str, file: str = "") -> dict[str, Any]:
    """Every release of a `<component>.yaml` text, each an instance of its kind's model; CatalogError otherwise."""
    file = file or f"{component}.yaml"
    if component not in KINDS:
        raise CatalogError(f"{file}: no entry model for component {component!r}; known: {', '.join(KINDS)}")
    data = yaml.load(text, Loader=LOADER)
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict) or not releases:
        raise CatalogError(f"{file}: expected a mapping 'releases: {{<release>: {{...}}}}'")
    stray = [key for key in data if key != "releases" and not str(key).startswith("x-")]
    if stray:
        raise CatalogError(f"{file}: unknown top-level key(s) {', '.join(map(str, stray))} (only `releases` and "
                           "`x-` anchors)")
    parsed = {}
    for release, entry in releases.items():
        if not isinstance(release, str):
            raise CatalogError(f"{file}: release {release!r} must be written as a string (quote it)")
        try:
            parsed[release] = KINDS[component].model_validate(entry)
        except ValidationError as error:
            raise CatalogError(f"{file}: release {release}: " + "; ".join(_problems(error))) from None
    return parsed


@lru_cache(maxsize=None)
def component_releases(component: str) -> dict[str, Any]:
    """Every catalogued release of `component` (file `<component>.yaml` in CATALOG_DIR), in file order."""
    path = CATALOG_DIR / f"{component}.yaml"
    return parse_releases(component, path.read_text(encoding="utf-8"), path.name)


def known_releases(component: str) -> list[str]:
    """The releases of `component` the catalog describes, in file order."""
    return list(component_releases(component))


def release_entry(component: str, release: str) -> Any:
    """The catalog entry of one release (its kind's model); `UnknownRelease` lists the known ones when there is none."""
    releases = component_releases(component)
    if release not in releases:
        raise UnknownRelease(component, release, list(releases))
    return releases[release]


def installer_entry(kind: str, release: str) -> Installer:
    """The installer facts of one package kind's release: `installer_entry("driver", "24.1.rc3").flags`."""
    return release_entry(INSTALLER_COMPONENTS[kind], release).installer
