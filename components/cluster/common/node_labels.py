"""What a node carries once its host layer succeeded: readiness labels and the optional NPU taint."""
from __future__ import annotations

from components.cluster.common.template_functions import template_function
from components.config.hosts import Arch, Chip, NodeSpec
from components.config.versions import Versions

ACCELERATOR = "accelerator"
ACCELERATOR_TYPE = "accelerator-type"
HOST_ARCH = "host-arch"
WORKER_SELECTOR = "workerselector"
CHIP = "ascend-npu.io/chip"
CONTAINER_RUNTIME = "ascend-npu.io/container-runtime"
DRIVER_VERSION = "ascend-npu.io/driver-version"
READY = "ascend-npu.io/ready"

# The device plugin advertises 910, 910B and Atlas A3 chips under one name: at github.com/Ascend/mind-cluster v6.0.0,
# component/ascend-device-plugin/build/ascendplugin-910.yaml (accelerator huawei-Ascend910) serves both; at v26.1.0 an
# A3 (device type Ascend910A3, told apart by board id: ascend-common/devmanager/common/utils.go L274-289) is still
# huawei.com/Ascend910 and huawei-Ascend910 (ascend-device-plugin/pkg/server/manager.go L54-61).
RESOURCE_NAMES = {"910": "huawei.com/Ascend910", "910B": "huawei.com/Ascend910", "910C": "huawei.com/Ascend910",
                  "310": "huawei.com/Ascend310", "310P": "huawei.com/Ascend310P"}
ACCELERATORS = {"910": "huawei-Ascend910", "910B": "huawei-Ascend910", "910C": "huawei-Ascend910",
                "310": "huawei-Ascend310", "310P": "huawei-Ascend310P"}
HOST_ARCHES = {Arch.AARCH64: "huawei-arm", Arch.X86_64: "huawei-x86"}
# Every taint an NPU node may carry, whoever set it (MindCluster, this project, an operator by hand).
NPU_TAINT_KEYS = ("huawei.com/Ascend910", "huawei.com/Ascend310", "huawei.com/Ascend310P", "huawei.com/npu")


@template_function("ascend-npu.resourceName")
def resource_name(chip: str) -> str:
    """The extended resource a pod requests for one NPU of this chip type."""
    return RESOURCE_NAMES[chip]


def accelerator_type(chip: Chip, npu_count: int) -> str:
    """MindCluster's server form label: `module-910b-8`, `module-a3-16`, `module`, `half` or `card`."""
    if chip is Chip.A910C:
        # An A3 server of 8 NPUs shows 16 chips: Volcano's A3 x16 policy (ascend-for-volcano common/util/constants.go
        # L75, v26.1.0); the SuperPoD forms (`module-a3-16-super-pod`, `-8-super-pod`) need a SuperPoD id not set here.
        return f"module-a3-{npu_count}"
    if chip is Chip.A910B:
        return f"module-910b-{npu_count}" if npu_count in (8, 16) else f"card-910b-{npu_count}"
    if chip is Chip.A910:
        return {8: "module", 4: "half"}.get(npu_count, "card")
    return "card"


def node_labels(node: NodeSpec, versions: Versions) -> dict[str, str]:
    """Labels that admit the node to the NPU DaemonSets; applied only after its host steps succeed."""
    return {
        ACCELERATOR: ACCELERATORS[node.chip.value],
        ACCELERATOR_TYPE: accelerator_type(node.chip, node.npu_count),
        HOST_ARCH: HOST_ARCHES[node.arch],
        WORKER_SELECTOR: "dls-worker-node",
        CHIP: node.chip.value,
        CONTAINER_RUNTIME: node.container_runtime.value,
        DRIVER_VERSION: versions.driver,
        READY: "true",
    }


def node_taints(node: NodeSpec) -> list[dict[str, str]]:
    """A NoSchedule taint keyed by the node's resource name, so only pods that tolerate it land there."""
    return [{"key": resource_name(node.chip.value), "value": "present", "effect": "NoSchedule"}]
