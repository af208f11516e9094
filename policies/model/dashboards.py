"""How the pack recognises a Kubernetes Dashboard: the labels, names and ports its chart and manifests use."""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Iterable, Mapping

# The recommended manifest labels pods and Services `k8s-app`; chart 7.x labels each component
# `app.kubernetes.io/name: kubernetes-dashboard-<component>` and all of them `part-of: kubernetes-dashboard`.
DEFAULT_LABELS = [
    "k8s-app=kubernetes-dashboard",
    "app.kubernetes.io/name=kubernetes-dashboard",
    "app.kubernetes.io/name=kubernetes-dashboard-kong",
    "app.kubernetes.io/name=kubernetes-dashboard-web",
    "app.kubernetes.io/name=kubernetes-dashboard-api",
    "app.kubernetes.io/name=kubernetes-dashboard-auth",
    "app.kubernetes.io/part-of=kubernetes-dashboard",
]
# Service, namespace, ServiceAccount and chart names: `kubernetes-dashboard`, `kubernetes-dashboard-kong-proxy`, ...
DEFAULT_NAME_PATTERNS = ["*kubernetes-dashboard*"]
# The Dashboard (2.x) and the chart's Kong proxy serve HTTPS on 8443.
DEFAULT_PORTS = [8443]

CONFIG_PROPERTIES = {
    "dashboardLabels": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_LABELS,
                        "description": "`key=value` labels marking a Dashboard object or the pods a Service selects."},
    "dashboardNamePatterns": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_NAME_PATTERNS,
                              "description": "Globs for Dashboard Service, namespace, account and chart names."},
    "dashboardPorts": {"type": "array", "items": {"type": "integer"}, "default": DEFAULT_PORTS,
                       "description": "Ports (port or targetPort) that mark a Service or backend as a Dashboard."},
}


def _port_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None  # a named port says nothing about the number


@dataclass(frozen=True)
class DashboardMatcher:
    """The configured signs of a Dashboard; any one of them is enough."""

    labels: tuple[tuple[str, str], ...]
    name_patterns: tuple[str, ...]
    ports: frozenset[int]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "DashboardMatcher":
        pairs = [entry.partition("=") for entry in config.get("dashboardLabels", DEFAULT_LABELS)]
        ports = {_port_number(p) for p in config.get("dashboardPorts", DEFAULT_PORTS)}
        return cls(labels=tuple((key.strip(), value.strip()) for key, _, value in pairs),
                   name_patterns=tuple(config.get("dashboardNamePatterns", DEFAULT_NAME_PATTERNS)),
                   ports=frozenset(p for p in ports if p is not None))

    def by_labels(self, labels: Mapping[str, Any]) -> bool:
        """Whether labels (or a selector) carry one of the Dashboard labels."""
        return any(key in labels and labels[key] == value for key, value in self.labels)

    def by_name(self, *names: Any) -> bool:
        """Whether any of the names (namespace, Service, account, chart) matches a Dashboard pattern."""
        return any(isinstance(name, str) and fnmatchcase(name, pattern)
                   for name in names for pattern in self.name_patterns)

    def by_port(self, ports: Iterable[Any]) -> bool:
        """Whether any port number is a Dashboard port."""
        return any(_port_number(port) in self.ports for port in ports)
