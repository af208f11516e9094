"""The ascend-npu policy pack: serves every rule in `rules/` over the analyzer protocol."""
from pulumi_policy import EnforcementLevel, PolicyPack

from rules import ALL_POLICIES

PolicyPack(
    name="ascend-npu",
    description="Pinned versions and images, no public Dashboard, least privilege, node-level privilege for the NPU "
                "agents only and NPU safety for ascend-npu stacks.",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=ALL_POLICIES,
)
