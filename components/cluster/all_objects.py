"""Every cluster object of a stack, in one stable order: what both the Pulumi and the Helm sink receive."""
from __future__ import annotations

from typing import Any

from components.cluster.cluster_scoped.namespace import build_namespace
from components.cluster.cluster_scoped.scheduling import build_priority_class, build_runtime_class
from components.cluster.dashboard_access.rbac import build_dashboard_access
from components.cluster.device_plugin.daemonsets import build_device_plugin_daemonsets
from components.cluster.device_plugin.rbac import build_device_plugin_rbac, build_device_plugin_service_account
from components.cluster.exporter.daemonsets import build_exporter_daemonsets, build_exporter_service_account
from components.cluster.exporter.service import build_exporter_network_policy, build_exporter_service
from components.cluster.monitoring.alerts import build_prometheus_rule, build_rules_config_map
from components.cluster.monitoring.grafana_dashboard import build_dashboard_config_map
from components.cluster.monitoring.scrape import build_pod_monitor, build_scrape_secret
from components.cluster.validation.job import build_validation_jobs, build_validation_service_account


def monitoring_objects(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Scrape job, alerts and dashboard: the operator's kinds with the operator, else a Secret and a ConfigMap."""
    if values["monitoring"]["prometheusOperator"]:
        objects = [build_pod_monitor(values), build_prometheus_rule(values)]
    else:
        objects = [build_scrape_secret(values), build_rules_config_map(values)]
    if values["monitoring"]["grafanaDashboard"]:
        objects.append(build_dashboard_config_map(values))
    return objects


def cluster_objects(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Namespace, scheduling, RBAC, device plugin, exporter and monitoring, validation, Dashboard access."""
    exporter_on = values["exporter"]["enabled"]
    objects = [build_namespace(values)]
    if exporter_on:
        objects.append(build_priority_class(values))
    if values["runtimeClass"]["create"]:
        objects.append(build_runtime_class(values))
    objects.append(build_device_plugin_service_account(values))
    if exporter_on:
        objects.append(build_exporter_service_account(values))
    if values["validation"]["enabled"]:
        objects.append(build_validation_service_account(values))
    objects += build_device_plugin_rbac(values)
    objects += build_device_plugin_daemonsets(values)
    if exporter_on:
        objects += build_exporter_daemonsets(values)
        objects += [build_exporter_service(values), build_exporter_network_policy(values)]
        objects += monitoring_objects(values)
    if values["validation"]["enabled"]:
        objects += build_validation_jobs(values)
    if values["dashboardAccess"]["enabled"]:
        objects += build_dashboard_access(values)
    return objects
