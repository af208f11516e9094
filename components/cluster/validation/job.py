"""The validation Jobs: one NPU on a canary of each chip type, through the device plugin and the Ascend runtime."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from components.cluster.common.metadata import image_reference, metadata, pull_secrets, pulled_image
from components.cluster.common.node_labels import CHIP, resource_name
from components.cluster.common.pod_parts import requests_equal_limits, service_account, tolerations
from components.cluster.common.template_functions import template_function

APP = "ascend-npu-validation"
VALIDATION_SA = "ascend-npu-validation"
# Proves the runtime injected a device and the driver answers through it.
SCRIPT = "set -e; ls -l /dev/davinci[0-9]*; npu-smi info"


@template_function("ascend-npu.validationHash")
def version_hash(values: dict[str, Any], chip: str) -> str:
    """8 hex digits over everything one chip's Job proves; a change gives a new Job name, so a new run.

    Compact, key-sorted JSON is what Go's `toJson` writes too, so a chart can compute the same hash.
    """
    job = values["validation"]["jobs"][chip]
    registry = values["images"]["registry"]
    proved = {"versions": values["versions"], "devicePlugin": pulled_image(values["devicePlugin"]["image"], registry),
              "chip": chip, "image": pulled_image(job["image"], registry), "node": job["node"]}
    text = json.dumps(proved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def job_name(values: dict[str, Any], chip: str) -> str:
    """`ascend-npu-validation-<chip>-<hash>`."""
    return f"{APP}-{chip.lower()}-{version_hash(values, chip)}"


def canary_node(values: dict[str, Any], chip: str) -> str:
    """The node `chip`'s Job runs on: it waits for that node's labels."""
    return values["validation"]["jobs"][chip]["node"]


def create_timeout(values: dict[str, Any]) -> str:
    """How long Pulumi waits for a Job to complete: as long as the Job may run, and two minutes more."""
    return f"{values['validation']['timeoutSeconds'] + 120}s"


def build_validation_job(values: dict[str, Any], chip: str) -> dict[str, Any]:
    """A Job on `chip`'s canary that must complete for `pulumi up` to succeed; it fails after `timeoutSeconds`."""
    validation, job = values["validation"], values["validation"]["jobs"][chip]
    meta = metadata(values, job_name(values, chip), "validation", APP, values["versions"]["cann"], values["namespace"],
                    {CHIP: chip})
    container = {
        "name": "npu-smi",
        "image": image_reference(job["image"], values["images"]["registry"]),
        "imagePullPolicy": job["image"]["pullPolicy"],
        "command": ["/bin/sh", "-c", SCRIPT],
        "resources": requests_equal_limits({"cpu": "500m", "memory": "512Mi"}, {resource_name(chip): 1}),
        # npu-smi and the CANN tools write logs under /var/log and $HOME: both go to scratch volumes.
        "env": [{"name": "HOME", "value": "/tmp"}],
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}, {"name": "logs", "mountPath": "/var/log"}],
    }
    pod_spec: dict[str, Any] = {
        "serviceAccountName": VALIDATION_SA,
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "nodeSelector": {"kubernetes.io/hostname": job["node"]},
        "tolerations": tolerations(values),
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "logs", "emptyDir": {}}],
        **pull_secrets(values["images"]),
    }
    if values["runtimeClass"]["create"]:
        pod_spec["runtimeClassName"] = values["runtimeClass"]["name"]
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
        "spec": {"backoffLimit": validation["backoffLimit"],
                 "activeDeadlineSeconds": validation["timeoutSeconds"],
                 "template": {"metadata": {"labels": dict(meta["labels"])}, "spec": pod_spec}},
    }


def build_validation_jobs(values: dict[str, Any]) -> list[dict[str, Any]]:
    """One Job per chip type a device plugin runs for."""
    return [build_validation_job(values, chip) for chip in values["devicePlugin"]["chips"]]


def build_validation_service_account(values: dict[str, Any]) -> dict[str, Any]:
    """The Jobs' ServiceAccount: no API access and no token."""
    return service_account(values, VALIDATION_SA, "validation", values["versions"]["cann"], token=False)
