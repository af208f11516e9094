"""The validation Job: one NPU on the canary, through the runtime, renamed when what it proves changes."""
from __future__ import annotations

import copy

from components.cluster.validation.job import build_validation_job

from .stacks import of_kind, one, pod_spec


def advertised(objs: list[dict], chip: str) -> bool:
    return any(ds["metadata"]["labels"].get("ascend-npu.io/chip") == chip for ds in of_kind(objs, "DaemonSet"))


def jobs(objs: list[dict]) -> dict[str, dict]:
    return {j["metadata"]["labels"]["ascend-npu.io/chip"]: j for j in of_kind(objs, "Job")}


def test_one_job_per_chip_each_with_one_npu_of_its_chip_on_its_canary(objects):
    by_chip = jobs(objects["prod"])
    assert set(by_chip) == {"910B", "310P"}
    for chip, canary, resource, image in (
            ("910B", "train-01.prod.corp.example", "huawei.com/Ascend910", "9.1.0-910b-ubuntu22.04-py3.12"),
            ("310P", "infer-01.prod.corp.example", "huawei.com/Ascend310P", "9.1.0-310p-ubuntu22.04-py3.12")):
        spec = pod_spec(by_chip[chip])
        container = spec["containers"][0]
        assert spec["nodeSelector"] == {"kubernetes.io/hostname": canary}
        assert container["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi", resource: 1}
        assert container["resources"]["requests"] == container["resources"]["limits"]
        assert f":{image}@sha256:" in container["image"]
        assert advertised(objects["prod"], chip)
        assert spec["runtimeClassName"] == "ascend" and one(objects["prod"], "RuntimeClass")["handler"] == "ascend"
        assert spec["restartPolicy"] == "Never"
        assert "npu-smi info" in container["command"][-1]


def test_fails_fast_and_within_the_timeout(objects):
    for job in of_kind(objects["prod"], "Job"):
        assert job["spec"]["backoffLimit"] <= 2
        assert job["spec"]["activeDeadlineSeconds"] == 600
        assert "ttlSecondsAfterFinished" not in job["spec"], "a Job that deletes itself would drift from the stack"
        assert "pulumi.com/skipAwait" not in job["metadata"].get("annotations", {}), "`pulumi up` must wait for it"


def test_default_runtime_stack_has_no_runtime_class(objects):
    assert not of_kind(objects["dev-ascend-default"], "RuntimeClass")
    assert "runtimeClassName" not in pod_spec(one(objects["dev-ascend-default"], "Job"))


def test_name_follows_the_versions(values):
    base = values["prod"]
    name = build_validation_job(base, "910B")["metadata"]["name"]
    assert name.startswith("ascend-npu-validation-910b-") and len(name) <= 63
    assert build_validation_job(base, "310P")["metadata"]["name"].startswith("ascend-npu-validation-310p-")
    newer = copy.deepcopy(base)
    newer["versions"]["driver"] = "24.1.rc3"
    assert build_validation_job(newer, "910B")["metadata"]["name"] != name
    other_image = copy.deepcopy(base)
    other_image["validation"]["jobs"]["910B"]["image"]["tag"] = "8.0.0-910b-ubuntu22.04-py3.11"
    assert build_validation_job(other_image, "910B")["metadata"]["name"] != name
    assert build_validation_job(other_image, "310P") == build_validation_job(base, "310P"), "each chip its own run"
    unrelated = copy.deepcopy(base)
    unrelated["exporter"]["port"] = 9100
    assert build_validation_job(unrelated, "910B")["metadata"]["name"] == name


def test_absent_when_disabled(objects):
    assert not of_kind(objects["prod-volcano-digest"], "Job")
