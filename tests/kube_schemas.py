"""Strict Kubernetes schema checks shared by the cluster and chart tests: kubernetes-validate and the CRDs."""
from __future__ import annotations

import json
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from tests.stacks import ROOT

OLDEST = Version("1.28")
K8S_VERSIONS = sorted({f"{Version(v).major}.{Version(v).minor}" for v in all_versions() if Version(v) >= OLDEST},
                      key=Version)
# The CRDs of the kinds the project emits, vendored from the operator release it targets (README.md there).
CRD_DIR = ROOT / "tests" / "schemas" / "prometheus-operator-v0.93.0"
CRD_KINDS = ("PodMonitor", "PrometheusRule")
CUSTOM_GROUPS = ("monitoring.coreos.com/",)


def unique_objects(objects: dict[str, list[dict]], custom: bool) -> list[tuple[str, dict]]:
    """(variant, object) once per distinct object, built-in or custom kinds."""
    seen, result = set(), []
    for variant, objs in objects.items():
        for obj in objs:
            if obj["apiVersion"].startswith(CUSTOM_GROUPS) != custom:
                continue
            key = json.dumps(obj, sort_keys=True)
            if key not in seen:
                seen.add(key)
                result.append((variant, obj))
    return result


def builtin_failures(objects: dict[str, list[dict]], version: str) -> list[str]:
    """One line per built-in object that kubernetes-validate refuses, strictly, for `version`."""
    failures = []
    for variant, obj in unique_objects(objects, custom=False):
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            failures.append(f"{variant} {obj['kind']}/{obj['metadata']['name']}: {where}: {exc.message}")
    return failures


def strict(schema: Any) -> Any:
    """The CRD schema with unknown fields refused wherever it lists the fields, as the API server prunes them."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out \
                and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def crd_validators() -> dict[tuple[str, str], jsonschema.Validator]:
    """(apiVersion, kind) -> validator of the served version's schema, for every CRD in CRD_DIR."""
    validators = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        for served in crd["spec"]["versions"]:
            schema = strict(served["schema"]["openAPIV3Schema"])
            key = (f"{crd['spec']['group']}/{served['name']}", crd["spec"]["names"]["kind"])
            validators[key] = jsonschema.Draft7Validator(schema)
    missing = set(CRD_KINDS) - {kind for _, kind in validators}
    assert not missing, f"no CRD schema for {sorted(missing)} in {CRD_DIR}: restore the vendored files"
    return validators
