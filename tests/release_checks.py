"""What the tests ask of built objects against the release catalog: flags, metrics and labels they rely on."""
from __future__ import annotations

import re
from typing import Any

from components.releases.catalog import release_entry

COMPONENTS = {"device-plugin": ("device-plugin", "devicePlugin"), "exporter": ("npu-exporter", "exporter")}
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{")
# Series the alerts read that no exporter writes: Prometheus' own per-target `up`, and kube-state-metrics'.
NOT_FROM_EXPORTER = {"up", "kube_node_status_allocatable"}
# Labels Prometheus itself gives every series of a target.


def flag_name(arg: str) -> str:
    """`--healthz-address=11251` -> `healthz-address`; Go's flag package takes one or two dashes."""
    return arg.lstrip("-").split("=", 1)[0]


def undefined_flags(objects: list[dict[str, Any]], values: dict[str, Any]) -> list[str]:
    """`<daemonset>: -<flag>` for every flag a DaemonSet passes that its pinned release does not define."""
    problems = []
    for obj in objects:
        if obj["kind"] != "DaemonSet":
            continue
        catalog, section = COMPONENTS[obj["metadata"]["labels"]["app.kubernetes.io/component"]]
        defined = release_entry(catalog, values[section]["release"]).flags
        for container in obj["spec"]["template"]["spec"]["containers"]:
            assert all(arg.startswith("-") for arg in container["args"]), "flags only, no shell"
            problems += [f"{obj['metadata']['name']}: {arg}" for arg in container["args"]
                         if flag_name(arg) not in defined]
    return problems


def flags_passed(objects: list[dict[str, Any]]) -> int:
    """How many flags the DaemonSets pass in all (so a check over them cannot pass on nothing)."""
    return sum(len(c["args"]) for o in objects if o["kind"] == "DaemonSet"
               for c in o["spec"]["template"]["spec"]["containers"])


def metrics_in(expr: str) -> set[str]:
    """Metric names a PromQL expression selects (`name{...}`)."""
    return set(SELECTOR.findall(expr))


def exporter_labels(values: dict[str, Any]) -> set[str]:
    """Every label the pinned exporter writes on its series."""
    return set(release_entry("npu-exporter", values["exporter"]["release"]).labels)


def exporter_metrics(values: dict[str, Any]) -> set[str]:
    """Every metric the pinned exporter defines."""
    return set(release_entry("npu-exporter", values["exporter"]["release"]).metrics)
