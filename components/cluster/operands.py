"""The one registry of the cluster layer: the shared objects, then each operand, its parts and what it waits for."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from components.cluster.cluster_scoped.namespace import build_namespace
from components.cluster.cluster_scoped.scheduling import build_priority_class, build_runtime_class
from components.cluster.common.node_labels import CHIP, CONTAINER_RUNTIME
from components.cluster.dashboard_access.rbac import build_dashboard_access
from components.cluster.device_plugin.daemonsets import build_device_plugin_daemonsets
from components.cluster.device_plugin.rbac import build_device_plugin_rbac, build_device_plugin_service_account
from components.cluster.exporter.daemonsets import build_exporter_daemonsets, build_exporter_service_account
from components.cluster.exporter.service import build_exporter_endpoint
from components.cluster.monitoring.scrape import monitoring_objects
from components.cluster.validation.job import (
    build_validation_jobs,
    build_validation_service_account,
    canary_node,
    create_timeout,
)

Values = dict[str, Any]
Object = dict[str, Any]
Predicate = Callable[[Values], bool]
Builder = Callable[[Values], list[Object]]

NAMESPACE, PRIORITY_CLASS, RUNTIME_CLASS = "namespace", "priority-class", "runtime-class"
OWN_RBAC = "own-rbac"  # a wait on the operand's own ServiceAccount and RBAC
CANARY = "canary"  # a wait on the labels of the canary node of the workload's key


def switch(*path: str) -> Predicate:
    """On when the chart value at `path` (a boolean the chart switches on) is."""
    def enabled(values: Values) -> bool:
        for key in path:
            values = values[key]
        return bool(values)
    return enabled


def always(values: Values) -> bool:
    return True


def nothing(values: Values) -> list[Object]:
    return []


@dataclass(frozen=True)
class Shared:
    """A cluster object of no operand (Namespace, PriorityClass, RuntimeClass); operands wait for it by name."""

    name: str
    enabled: Predicate
    build: Callable[[Values], Object]


@dataclass(frozen=True)
class Operand:
    """What the cluster runs for one component: when, what it builds, what its workloads wait for, their keys.

    `waits` holds OWN_RBAC, PRIORITY_CLASS (when created and named by the pods), RUNTIME_CLASS (when created),
    CANARY (the workload is registered once `canary(values, key)` is labelled) or the name of an earlier
    operand (its workload of the same key). `extras` are registered without edges.
    """

    name: str
    enabled: Predicate
    service_account: Optional[Callable[[Values], Object]] = None
    rbac: Builder = nothing
    workloads: Builder = nothing
    extras: tuple[Builder, ...] = ()
    waits: tuple[str, ...] = ()
    key: Optional[str] = None  # the label that keys each workload in `output`
    # A label some workloads of one key carry to tell them apart (`<key>/<variant>` in `output`); what waits for the
    # key waits for all of them.
    variant: Optional[str] = None
    output: Optional[str] = None
    canary: Optional[Callable[[Values, str], str]] = None
    stable_name: Optional[str] = None  # registered as `<kind>-<stable_name>-<key>`: its Kubernetes name changes
    create_timeout: Optional[Callable[[Values], str]] = None


@dataclass(frozen=True)
class Registry:
    """Shared objects first (the Namespace leading), then the operands, in the order their objects are built."""

    shared: tuple[Shared, ...]
    operands: tuple[Operand, ...]

    def __post_init__(self) -> None:
        problems = registry_problems(self)
        if problems:
            raise ValueError("the operand registry is inconsistent: " + "; ".join(problems))

    def operand(self, name: str) -> Operand:
        return next(op for op in self.operands if op.name == name)

    def with_operand(self, operand: Operand) -> Registry:
        """This registry with one more operand, built and registered after the others."""
        return Registry(self.shared, (*self.operands, operand))


def registry_problems(registry: Registry) -> list[str]:
    """Why a registry cannot be wired: duplicate names, waits on nothing known or on a later operand."""
    problems = [] if registry.shared and registry.shared[0].name == NAMESPACE else ["the Namespace must come first"]
    names = [s.name for s in registry.shared] + [op.name for op in registry.operands]
    problems += [f"'{n}' is registered twice" for n in sorted({n for n in names if names.count(n) > 1})]
    outputs = [op.output for op in registry.operands if op.output]
    problems += [f"output '{o}' is registered twice" for o in sorted({o for o in outputs if outputs.count(o) > 1})]
    earlier: set[str] = set()
    for op in registry.operands:
        if (op.output or op.waits) and not op.key:
            problems.append(f"'{op.name}' keys no workloads")
        if CANARY in op.waits and op.canary is None:
            problems.append(f"'{op.name}' waits for a canary it does not name")
        for wait in op.waits:
            if wait not in (OWN_RBAC, PRIORITY_CLASS, RUNTIME_CLASS, CANARY) and wait not in earlier:
                problems.append(f"'{op.name}' waits for '{wait}', which is no earlier operand")
        earlier.add(op.name)
    return problems


REGISTRY = Registry(
    shared=(
        Shared(NAMESPACE, always, build_namespace),
        Shared(PRIORITY_CLASS, switch("exporter", "enabled"), build_priority_class),
        Shared(RUNTIME_CLASS, switch("runtimeClass", "create"), build_runtime_class),
    ),
    operands=(
        Operand("device-plugin", always, build_device_plugin_service_account, build_device_plugin_rbac,
                build_device_plugin_daemonsets, waits=(OWN_RBAC, PRIORITY_CLASS), key=CHIP, variant=CONTAINER_RUNTIME,
                output="devicePlugins"),
        Operand("exporter", switch("exporter", "enabled"), build_exporter_service_account,
                workloads=build_exporter_daemonsets,
                extras=(build_exporter_endpoint, monitoring_objects),
                waits=(OWN_RBAC, PRIORITY_CLASS), key=CONTAINER_RUNTIME, output="exporters"),
        Operand("validation", switch("validation", "enabled"), build_validation_service_account,
                workloads=build_validation_jobs, waits=(OWN_RBAC, "device-plugin", CANARY, RUNTIME_CLASS), key=CHIP,
                output="validationJobs", canary=canary_node, stable_name="validation", create_timeout=create_timeout),
        Operand("dashboard-access", switch("dashboardAccess", "enabled"), extras=(build_dashboard_access,)),
    ),
)
