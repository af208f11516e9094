"""The labels one exporter series gets in Prometheus on each scrape path, from the relabeling rules as written.

Simulated: the discovered exporter pod (its meta labels) and one series it writes. Not simulated: the rules.
The Prometheus Operator's rules for a PodMonitor follow prometheus-operator pkg/prometheus/promcfg.go
`generatePodMonitorConfig` at v0.93.0 (L1519-1661); the relabel actions follow prometheus model/relabel/relabel.go
at v3.14.0 (L296-355), the job and instance labels scrape/target.go `PopulateDiscoveredLabels` and
`PopulateLabels` (L589-691), and the rename of a clashing series label to `exported_<name>` with
`honor_labels: false` scrape/scrape.go `mutateSampleLabels` (L582-611).
"""
from __future__ import annotations

import re
from typing import Any, Optional

from components.cluster.exporter.daemonsets import APP, PORT_NAME

NODE_LABELS = {"ascend-npu.io/chip": "910B", "accelerator-type": "module-910b-8"}


def discovered(namespace: str) -> dict[str, str]:
    """Meta labels of one running exporter pod as the pod role with `attach_metadata: node` writes them."""
    labels = {"__address__": "10.244.1.7:8082", "__meta_kubernetes_namespace": namespace,
              "__meta_kubernetes_pod_name": "npu-exporter-containerd-x7k2p",
              "__meta_kubernetes_pod_container_name": "npu-exporter",
              "__meta_kubernetes_pod_container_port_name": PORT_NAME, "__meta_kubernetes_pod_phase": "Running",
              "__meta_kubernetes_pod_node_name": "train-01.prod.corp.example",
              "__meta_kubernetes_pod_label_app_kubernetes_io_name": APP,
              "__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name": "true"}
    for key, value in NODE_LABELS.items():
        labels["__meta_kubernetes_node_label_" + re.sub(r"[^A-Za-z0-9_]", "_", key)] = value
    return labels


def relabel(labels: dict[str, str], rules: list[dict[str, Any]]) -> Optional[dict[str, str]]:
    """Prometheus relabeling over snake_case rules; None when a rule drops the target."""
    labels = dict(labels)
    for rule in rules:
        action = rule.get("action", "replace").lower()
        regex = re.compile(f"^(?:{rule.get('regex', '(.*)')})$")
        value = rule.get("separator", ";").join(labels.get(s, "") for s in rule.get("source_labels", []))
        if action in ("keep", "drop"):
            if bool(regex.match(value)) != (action == "keep"):
                return None
        elif action == "labeldrop":
            labels = {k: v for k, v in labels.items() if not regex.match(k)}
        elif action == "replace":
            match = regex.match(value)
            if match:
                target = match.expand(rule.get("replacement", "$1").replace("${1}", r"\1").replace("$1", r"\1"))
                if target:
                    labels[rule["target_label"]] = target
                else:
                    labels.pop(rule["target_label"], None)
        else:
            raise AssertionError(f"action {action} is not simulated")
    return labels


def target(job_name: str, namespace: str, rules: list[dict[str, Any]]) -> dict[str, str]:
    """Target labels after relabeling: `job` first, then the rules, `__` labels dropped, `instance` filled."""
    labels = relabel({"job": job_name, **discovered(namespace)}, rules)
    assert labels is not None, "the exporter pod was dropped"
    result = {k: v for k, v in labels.items() if not k.startswith("__")}
    result.setdefault("instance", labels["__address__"])
    return result


def series(target_labels: dict[str, str], written: dict[str, str]) -> dict[str, str]:
    """A scraped series with `honor_labels: false`: target labels win, clashing series labels become exported_*."""
    result = dict(written)
    for name, value in target_labels.items():
        if name in written:
            exported = "exported_" + name
            while exported in result:
                exported = "exported_" + exported
            result[exported] = written[name]
        result[name] = value
    return result


def snake(rule: dict[str, Any]) -> dict[str, Any]:
    """A PodMonitor relabeling as Prometheus reads it (the operator writes camelCase keys in snake_case)."""
    names = {"sourceLabels": "source_labels", "targetLabel": "target_label"}
    return {names.get(k, k): v for k, v in rule.items()}


def operator_rules(monitor: dict[str, Any]) -> list[dict[str, Any]]:
    """The relabel_configs the operator generates for the PodMonitor's first endpoint, no scrape class."""
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    meta = monitor["metadata"]
    rules = [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"},
             {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"}]
    for key, value in sorted(monitor["spec"]["selector"]["matchLabels"].items()):
        name = re.sub(r"[^A-Za-z0-9_]", "_", key)
        rules.append({"action": "keep", "source_labels": [f"__meta_kubernetes_pod_label_{name}",
                                                          f"__meta_kubernetes_pod_labelpresent_{name}"],
                      "regex": f"({value});true"})
    rules += [{"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
               "regex": endpoint["port"]},
              {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
              {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
              {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
              {"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"},
              {"target_label": "endpoint", "replacement": endpoint["port"]}]
    return rules + [snake(r) for r in endpoint.get("relabelings", [])]
