"""`--extra-resources`: objects from a YAML file judged by the pack together with the stack's own."""
from __future__ import annotations

from pathlib import Path

from components.plan.stack_files import StackConfig


class ExtraResourcesError(Exception):
    """A `--extra-resources` file that cannot be read as resources."""


def extra_resources(path: Path, config: StackConfig) -> list:
    """Resources from a YAML file (`{type, name, properties}`, one or a list), recorded as if the stack registered
    them: a manifest tried against the pack with the stack's own objects."""
    import yaml

    from components.plan.recorder import Recorded
    try:
        docs = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ExtraResourcesError(f"{path}: cannot read it ({exc})") from exc
    docs = docs if isinstance(docs, list) else [docs]
    recorded = []
    for i, doc in enumerate(docs):
        if not (isinstance(doc, dict) and isinstance(doc.get("type"), str) and isinstance(doc.get("name"), str)
                and isinstance(doc.get("properties"), dict)):
            raise ExtraResourcesError(f"{path}: resource {i} needs `type` (e.g. kubernetes:core/v1:Pod), `name` and "
                                 "`properties` (the object)")
        urn = f"urn:pulumi:{config.stack}::{config.project}::{doc['type']}::{doc['name']}"
        recorded.append(Recorded(urn=urn, type=doc["type"], name=doc["name"], parent="", custom=True,
                                 dependencies=[], property_dependencies={}, provider="",
                                 properties=doc["properties"]))
    return recorded
