"""The firmware / driver / CANN compatibility matrix (compatibility.yaml beside the pack) and its verdict."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import yaml

MATRIX_FILE = Path(__file__).resolve().parents[1] / "compatibility.yaml"


@dataclass(frozen=True)
class FrameworkRelease:
    """One framework release: the CANN versions and Python versions its own table pairs it with."""

    version: str
    cann: tuple[str, ...]
    python: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Matrix:
    """Documented CANN -> driver and driver -> firmware pairs, lower-cased."""

    cann_driver: frozenset[tuple[str, str]]
    driver_firmware: frozenset[tuple[str, str]]
    frameworks: tuple[tuple[str, tuple[FrameworkRelease, ...]], ...] = ()

    def drivers_for(self, cann: str) -> list[str]:
        return sorted({d for c, d in self.cann_driver if c == cann.lower()})

    def firmware_for(self, driver: str) -> list[str]:
        return sorted({f for d, f in self.driver_firmware if d == driver.lower()})

    def problem(self, firmware: str, driver: str, cann: str) -> Optional[str]:
        """None when documented; otherwise what is wrong and what is documented instead."""
        fw, drv, cn = firmware.lower(), driver.lower(), cann.lower()
        drivers = self.drivers_for(cn)
        if not drivers:
            known = sorted({c for c, _ in self.cann_driver})
            return f"CANN {cann} is not in the compatibility matrix (known: {', '.join(known)})"
        if drv not in drivers:
            return f"CANN {cann} is documented with driver {' or '.join(drivers)}, not {driver}"
        firmwares = self.firmware_for(drv)
        if not firmwares:
            return f"driver {driver} has no documented firmware"
        if fw not in firmwares:
            return f"driver {driver} is documented with firmware {' or '.join(firmwares)}, not {firmware}"
        return None


    def framework_releases(self, framework: str) -> tuple[FrameworkRelease, ...]:
        return dict(self.frameworks).get(framework, ())

    def framework_problem(self, framework: str, version: str, cann: str, python: Optional[str]) -> Optional[str]:
        """None when the framework's own table pairs `version` with this CANN (and Python); else what fits."""
        releases = self.framework_releases(framework)
        release = next((r for r in releases if r.version.lower() == version.lower()), None)
        if release is None:
            known = ", ".join(r.version for r in releases)
            return f"{framework} {version} is not in the compatibility data (known: {known})"
        if cann.lower() not in {c.lower() for c in release.cann}:
            fits = [r.version for r in releases if cann.lower() in {c.lower() for c in r.cann}]
            return (f"{framework} {version} is documented with CANN {' or '.join(release.cann)}, not CANN {cann} "
                    f"({release.source}); with CANN {cann} use {framework} {' or '.join(fits) or '(none documented)'}")
        if python is not None and python not in release.python:
            return (f"{framework} {version} supports Python {', '.join(release.python)}, not {python} "
                    f"({release.source})")
        return None


@lru_cache(maxsize=None)
def load_matrix(path: Path = MATRIX_FILE) -> Matrix:
    """Read the matrix data file once."""
    data = yaml.safe_load(path.read_text())
    cann_driver = {(str(row["cann"]).lower(), str(d).lower()) for row in data["cannDriver"] for d in row["drivers"]}
    driver_firmware = {(str(row["driver"]).lower(), str(row["firmware"]).lower()) for row in data["driverFirmware"]}
    frameworks = tuple((name, tuple(FrameworkRelease(str(r["version"]), tuple(str(c) for c in r["cann"]),
                                                      tuple(str(p) for p in r["python"]), str(r["source"]))
                                     for r in rows))
                       for name, rows in (data.get("frameworks") or {}).items())
    return Matrix(frozenset(cann_driver), frozenset(driver_firmware), frameworks)
