"""ascend-npu: Huawei Ascend NPUs from bare servers to Kubernetes workloads, as one Pulumi graph."""
