"""The doctor's checks, one module per family: each module (not starting with `_`) declares its finding KINDS."""
import importlib
import pkgutil

from components.doctor.findings import Kind


def discover() -> dict[str, Kind]:
    """Every finding kind by id, from the `KINDS` of every check module; an id declared twice is refused."""
    kinds: dict[str, Kind] = {}
    for name in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
        module = importlib.import_module(f"{__name__}.{name}")
        for kind in getattr(module, "KINDS", None) or ():
            if kind.id in kinds:
                raise ImportError(f"checks/{name}.py declares finding id {kind.id}, declared already")
            kinds[kind.id] = kind
        if not getattr(module, "KINDS", None):
            raise ImportError(f"checks/{name}.py declares no KINDS: every module of checks/ is a family of checks")
    return kinds
