"""The exporter's Service and the NetworkPolicy that lets only Prometheus reach its metrics port."""
from __future__ import annotations

from typing import Any

from components.cluster.exporter.daemonsets import APP, PORT_NAME, exporter_meta


def build_exporter_service(values: dict[str, Any]) -> dict[str, Any]:
    """A ClusterIP Service over every exporter pod, for in-cluster scrapers that want one."""
    port = values["exporter"]["port"]
    return {"apiVersion": "v1", "kind": "Service", "metadata": exporter_meta(values, APP),
            "spec": {"type": "ClusterIP", "selector": {"app.kubernetes.io/name": APP},
                     "ports": [{"name": PORT_NAME, "port": port, "targetPort": PORT_NAME, "protocol": "TCP"}]}}


def build_exporter_network_policy(values: dict[str, Any]) -> dict[str, Any]:
    """Only Prometheus pods, in Prometheus' namespace, reach the metrics port; nothing else gets in."""
    monitoring = values["monitoring"]
    source = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": monitoring["prometheusNamespace"]}},
              "podSelector": {"matchLabels": dict(monitoring["prometheusPodLabels"])}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": exporter_meta(values, APP),
            "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": APP}},
                     "policyTypes": ["Ingress"],
                     "ingress": [{"from": [source],
                                  "ports": [{"protocol": "TCP", "port": values["exporter"]["port"]}]}]}}


def build_exporter_endpoint(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The Service and the NetworkPolicy in front of the exporter pods."""
    return [build_exporter_service(values), build_exporter_network_policy(values)]
