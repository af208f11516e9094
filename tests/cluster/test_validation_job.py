"""The validation Job: one NPU on the canary, through the runtime, renamed when what it proves changes."""
from __future__ import annotations

import copy

from components.cluster.validation.job import build_validation_job

from .stacks import of_kind, one, pod_spec


def advertised(objs: list[dict], chip: str) -> bool:
    return any(ds["metadata"]["labels"].get("ascend-npu.io/chip") == chip for ds in of_kind(objs, "DaemonSet"))


def test_requests_one_npu_of_the_canary_on_the_canary(objects):
    job = one(objects["prod"], "Job")
    spec = pod_spec(job)
    container = spec["containers"][0]
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "train-01.prod.corp.example"}
    assert container["resources"]["limits"]["huawei.com/Ascend910"] == 1
    assert container["resources"]["requests"] == container["resources"]["limits"]
    assert advertised(objects["prod"], "910B")
    assert spec["runtimeClassName"] == "ascend" and one(objects["prod"], "RuntimeClass")["handler"] == "ascend"
    assert spec["restartPolicy"] == "Never"
    assert "npu-smi info" in container["command"][-1]


def test_fails_fast_and_within_the_timeout(objects):
    job = one(objects["prod"], "Job")
    assert job["spec"]["backoffLimit"] <= 2
    assert job["spec"]["activeDeadlineSeconds"] == 600
    assert "ttlSecondsAfterFinished" not in job["spec"], "a Job that deletes itself would drift from the stack"
    assert "pulumi.com/skipAwait" not in job["metadata"].get("annotations", {}), "`pulumi up` must wait for it"


def test_default_runtime_stack_has_no_runtime_class(objects):
    assert not of_kind(objects["dev-ascend-default"], "RuntimeClass")
    assert "runtimeClassName" not in pod_spec(one(objects["dev-ascend-default"], "Job"))


def test_name_follows_the_versions(values):
    base = values["prod"]
    name = build_validation_job(base)["metadata"]["name"]
    assert name.startswith("ascend-npu-validation-") and len(name) <= 63
    newer = copy.deepcopy(base)
    newer["versions"]["driver"] = "24.1.rc3"
    assert build_validation_job(newer)["metadata"]["name"] != name
    other_image = copy.deepcopy(base)
    other_image["validation"]["image"]["tag"] = "8.0.0-910b-ubuntu22.04-py3.11"
    assert build_validation_job(other_image)["metadata"]["name"] != name
    unrelated = copy.deepcopy(base)
    unrelated["exporter"]["port"] = 9100
    assert build_validation_job(unrelated)["metadata"]["name"] == name


def test_absent_when_disabled(objects):
    assert not of_kind(objects["prod-volcano-digest"], "Job")
