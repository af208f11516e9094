"""Node readiness labels: what MindCluster expects plus the project's own, all valid label values."""
from __future__ import annotations

import re

from components.cluster.common.node_labels import accelerator_type, node_labels
from components.config.hosts import Chip

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def test_a_910b_training_node(specs):
    spec = specs["dev"]
    assert node_labels(spec.node("dev-npu-01"), spec.versions) == {
        "accelerator": "huawei-Ascend910", "accelerator-type": "module-910b-8", "host-arch": "huawei-arm",
        "workerselector": "dls-worker-node", "ascend-npu.io/chip": "910B",
        "ascend-npu.io/container-runtime": "containerd", "ascend-npu.io/driver-version": "24.1.rc2",
        "ascend-npu.io/ready": "true"}


def test_a_310p_inference_node_on_docker(specs):
    spec = specs["prod"]
    labels = node_labels(spec.node("infer-07.prod.corp.example"), spec.versions)
    assert labels["accelerator"] == "huawei-Ascend310P" and labels["accelerator-type"] == "card"
    assert labels["host-arch"] == "huawei-x86" and labels["ascend-npu.io/container-runtime"] == "docker"


def test_server_forms():
    assert accelerator_type(Chip.A910B, 16) == "module-910b-16"
    assert accelerator_type(Chip.A910, 8) == "module" and accelerator_type(Chip.A910, 4) == "half"
    assert accelerator_type(Chip.A310, 4) == "card"


def test_every_label_is_a_valid_kubernetes_label(specs):
    for spec in specs.values():
        for node in spec.nodes:
            for key, value in node_labels(node, spec.versions).items():
                assert len(value) <= 63 and LABEL_VALUE.match(value), f"{node.name}: {key}={value}"
