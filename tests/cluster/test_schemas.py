"""Every built object validates strictly: built-in kinds with kubernetes-validate, custom ones with the CRDs."""
from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from tests.kube_schemas import K8S_VERSIONS, builtin_failures, crd_validators, unique_objects


def test_supported_versions_are_known():
    assert K8S_VERSIONS[0] == "1.28" and len(K8S_VERSIONS) >= 2, K8S_VERSIONS


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_builtin_kinds_validate_strictly(objects, version):
    failures = builtin_failures(objects, version)
    assert not failures, "\n".join(failures)


def test_strict_validation_rejects_an_unknown_field(objects):
    daemonset = copy.deepcopy(next(o for o in objects["dev"] if o["kind"] == "DaemonSet"))
    daemonset["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemonset, K8S_VERSIONS[-1], strict=True)


def test_custom_resources_validate_against_the_operator_crds(objects):
    validators = crd_validators()
    custom = unique_objects(objects, custom=True)
    assert {o["kind"] for _, o in custom} == {"PodMonitor", "PrometheusRule"}
    failures = []
    for variant, obj in custom:
        validator = validators.get((obj["apiVersion"], obj["kind"]))
        assert validator is not None, f"no CRD schema serves {obj['apiVersion']} {obj['kind']}"
        failures += [f"{variant} {obj['kind']}: {'.'.join(map(str, e.path))}: {e.message}"
                     for e in validator.iter_errors(obj)]
    assert not failures, "\n".join(failures)


def test_crd_validation_rejects_an_unknown_field(objects):
    validators = crd_validators()
    pod_monitor = copy.deepcopy(next(o for o in objects["prod"] if o["kind"] == "PodMonitor"))
    pod_monitor["spec"]["podMetricsEndpoints"][0]["targetPortName"] = "http-metrics"
    assert list(validators[("monitoring.coreos.com/v1", "PodMonitor")].iter_errors(pod_monitor))

