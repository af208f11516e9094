"""Every rule of the pack, one module each: any module here (not starting with `_`) is a rule with a `POLICY`."""
import importlib
import pkgutil


def discover() -> list:
    """The `POLICY` of every rule module, in the order of the module names (the rule ids, `_` for `-`)."""
    policies = []
    for name in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
        module = importlib.import_module(f"{__name__}.{name}")
        if not hasattr(module, "POLICY"):
            raise ImportError(f"rules/{name}.py defines no POLICY: every module of rules/ is one rule")
        policies.append(module.POLICY)
    return policies


ALL_POLICIES = discover()
