"""Every object the chart renders validates strictly, for Kubernetes 1.28 to the newest kubernetes-validate knows."""
from __future__ import annotations

from typing import Any

import pytest

from tests.kube_schemas import K8S_VERSIONS, builtin_failures, crd_validators, unique_objects

from .rendering import as_values_file, render


@pytest.fixture(scope="module")
def rendered(chart, stack_values) -> dict[str, list[dict[str, Any]]]:
    """Each variant's rendered objects, and the defaults'."""
    return {name: list(render(chart, as_values_file(values)).values()) for name, values in stack_values.items()}


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_rendered_builtin_kinds_validate_strictly(rendered, version):
    failures = builtin_failures(rendered, version)
    assert not failures, "\n".join(failures)


def test_rendered_custom_resources_validate_against_the_operator_crds(rendered):
    validators = crd_validators()
    custom = unique_objects(rendered, custom=True)
    assert {o["kind"] for _, o in custom} == {"PodMonitor", "PrometheusRule"}
    failures = [f"{variant} {obj['kind']}: {'.'.join(map(str, e.path))}: {e.message}"
                for variant, obj in custom for e in validators[(obj["apiVersion"], obj["kind"])].iter_errors(obj)]
    assert not failures, "\n".join(failures)


def test_every_kind_the_chart_can_render_is_validated(rendered):
    kinds = {obj["kind"] for objs in rendered.values() for obj in objs}
    assert kinds == {"Namespace", "PriorityClass", "RuntimeClass", "ServiceAccount", "ClusterRole",
                     "ClusterRoleBinding", "Role", "RoleBinding", "DaemonSet", "Service", "NetworkPolicy", "Secret",
                     "ConfigMap", "PodMonitor", "PrometheusRule", "Job"}
