"""`--set` overrides of the common values change exactly the fields and objects they should."""
from __future__ import annotations

from typing import Any, Iterator

import helm_python
import pytest

from components.cluster.all_objects import cluster_objects

from .rendering import as_values_file, key, merged, render, without_release_labels

Path = tuple[Any, ...]
VERSION = ("metadata", "labels", "app.kubernetes.io/version")
POD_VERSION = ("spec", "template", "metadata", "labels", "app.kubernetes.io/version")
CONTAINER = ("spec", "template", "spec", "containers", 0)
PLUGIN, EXPORTER = "DaemonSet/ascend-device-plugin-910b", "DaemonSet/npu-exporter-containerd"
EXPORTER_OBJECTS = ("ServiceAccount/npu-exporter", "Service/npu-exporter", "NetworkPolicy/npu-exporter",
                    "Secret/ascend-npu-scrape-config", "ConfigMap/ascend-npu-alerts", "ConfigMap/ascend-npu-dashboard")
PLUGIN_RBAC = ("ServiceAccount/ascend-device-plugin", "ClusterRole/ascend-npu-device-plugin",
               "ClusterRoleBinding/ascend-npu-device-plugin", "ClusterRole/ascend-npu-device-plugin-910b",
               "ClusterRoleBinding/ascend-npu-device-plugin-910b", "Role/ascend-npu-device-plugin",
               "RoleBinding/ascend-npu-device-plugin")


def differences(before: Any, after: Any, path: Path = ()) -> Iterator[Path]:
    """Paths whose value differs; a key or list item on one side only counts as a difference at its path."""
    if isinstance(before, dict) and isinstance(after, dict):
        for name in list(before) + [k for k in after if k not in before]:
            if name not in before or name not in after:
                yield path + (name,)
            else:
                yield from differences(before[name], after[name], path + (name,))
    elif isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            if index >= len(before) or index >= len(after):
                yield path + (index,)
            else:
                yield from differences(before[index], after[index], path + (index,))
    elif before != after:
        yield path


def rendered_by_name(chart, values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{k[0]}/{k[2]}": o for k, o in render(chart, values).items()}


def diff(chart, values: dict[str, Any], expression: str) -> tuple[set[str], set[str], set[tuple[str, Path]]]:
    """Objects removed, objects added and (object, path) changed by `--set expression` over `values`."""
    override = merged(values, helm_python.parse_set_string(expression))
    before, after = rendered_by_name(chart, values), rendered_by_name(chart, override)
    expected = {key(o): without_release_labels(o, "pulumi") for o in cluster_objects(override)}
    assert {k: without_release_labels(o, "Helm") for k, o in render(chart, override).items()} == expected
    changed = {(name, path) for name in set(before) & set(after) for path in differences(before[name], after[name])}
    return set(before) - set(after), set(after) - set(before), changed


@pytest.fixture(scope="module")
def dev(stack_values) -> dict[str, Any]:
    """The dev stack's values file: device plugin and exporter on containerd, validation Job, no operator."""
    return as_values_file(stack_values["dev"])


def test_exporter_image_tag(chart, dev):
    removed, added, changed = diff(chart, dev, "exporter.image.tag=v6.0.1")
    assert (removed, added) == (set(), set())
    assert changed == {(EXPORTER, CONTAINER + ("image",)), (EXPORTER, VERSION), (EXPORTER, POD_VERSION),
                       *((name, VERSION) for name in EXPORTER_OBJECTS)}


def test_device_plugin_image_tag_also_starts_a_new_validation_run(chart, dev):
    removed, added, changed = diff(chart, dev, "devicePlugin.image.tag=v6.0.1")
    assert [name.split("-")[:3] for name in removed | added] == [["Job/ascend", "npu", "validation"]] * 2
    assert changed == {(PLUGIN, CONTAINER + ("image",)), (PLUGIN, VERSION), (PLUGIN, POD_VERSION),
                       *((name, VERSION) for name in PLUGIN_RBAC)}


def test_device_plugin_release_v26_changes_only_its_flags_probe_and_rules(chart, dev):
    removed, added, changed = diff(chart, dev, "devicePlugin.image.tag=v26.1.0,devicePlugin.release=v26.1.0")
    assert [name.split("-")[:3] for name in removed | added] == [["Job/ascend", "npu", "validation"]] * 2
    def field(name: str, path: Path) -> Path:  # a container field or a role's rules, as one change
        if path[:len(CONTAINER)] == CONTAINER:
            return path[:len(CONTAINER) + 1]
        return path[:1] if path[0] == "rules" else path

    coarse = {(name, field(name, path)) for name, path in changed}
    release_fields = {(PLUGIN, CONTAINER + (f,)) for f in ("image", "args", "env", "ports", "livenessProbe",
                                                           "volumeMounts")}
    # data-trace config and containerd's state for the duplicate-NPU detector, v26.1.0 only
    volumes = {(PLUGIN, ("spec", "template", "spec", "volumes", i)) for i in (6, 7)}
    # containerd nodes only: Docker nodes get DaemonSets of their own (dev has none)
    selector = (PLUGIN, ("spec", "template", "spec", "nodeSelector", "ascend-npu.io/container-runtime"))
    assert coarse == {*release_fields, *volumes, selector, ("ClusterRole/ascend-npu-device-plugin", ("rules",)),
                      (PLUGIN, ("spec", "template", "spec", "hostPID")), (PLUGIN, VERSION), (PLUGIN, POD_VERSION),
                      *((name, VERSION) for name in PLUGIN_RBAC)}


def test_tolerations_reach_every_npu_pod(chart, dev):
    job = next(name for name in rendered_by_name(chart, dev) if name.startswith("Job/"))
    removed, added, changed = diff(chart, dev, "tolerations[0].key=dedicated,tolerations[0].operator=Exists")
    assert (removed, added) == (set(), set())
    assert changed == {(name, ("spec", "template", "spec", "tolerations", 5)) for name in (PLUGIN, EXPORTER, job)}


def test_node_selector_narrows_the_daemonsets_only(chart, dev):
    removed, added, changed = diff(chart, dev, "nodeSelector.pool=train")
    assert (removed, added) == (set(), set())
    assert changed == {(name, ("spec", "template", "spec", "nodeSelector", "pool")) for name in (PLUGIN, EXPORTER)}


def test_device_plugin_priority_class_name(chart, dev):
    removed, added, changed = diff(chart, dev, "devicePlugin.priorityClassName=system-cluster-critical")
    assert (removed, added) == (set(), set())
    assert changed == {(PLUGIN, ("spec", "template", "spec", "priorityClassName"))}


def test_exporter_priority_class_renamed_with_its_class(chart, dev):
    removed, added, changed = diff(chart, dev, "priorityClass.name=npu-agents,exporter.priorityClassName=npu-agents")
    assert (removed, added) == ({"PriorityClass/ascend-npu-node-agent"}, {"PriorityClass/npu-agents"})
    assert changed == {(EXPORTER, ("spec", "template", "spec", "priorityClassName"))}


def test_exporter_resources(chart, dev):
    removed, added, changed = diff(chart, dev, "exporter.resources.cpu=750m,exporter.resources.memory=1Gi")
    assert (removed, added) == (set(), set())
    assert changed == {(EXPORTER, CONTAINER + ("resources", side, amount))
                       for side in ("requests", "limits") for amount in ("cpu", "memory")}


def test_exporter_off_removes_the_exporter_and_its_monitoring_only(chart, dev):
    removed, added, changed = diff(chart, dev, "exporter.enabled=false")
    assert removed == {EXPORTER, "PriorityClass/ascend-npu-node-agent", *EXPORTER_OBJECTS}
    assert (added, changed) == (set(), set())


def test_exporter_back_on_restores_exactly_what_it_removed(chart, dev):
    off = merged(dev, helm_python.parse_set_string("exporter.enabled=false"))
    removed, added, changed = diff(chart, off, "exporter.enabled=true")
    assert added == {EXPORTER, "PriorityClass/ascend-npu-node-agent", *EXPORTER_OBJECTS}
    assert (removed, changed) == (set(), set())
