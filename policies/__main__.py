"""The ascend-npu policy pack: serves every rule in `rules/` over the analyzer protocol."""
from pathlib import Path

import pulumi_policy.policy as sdk
import yaml
from pulumi_policy import EnforcementLevel, PolicyPack

from rules import ALL_POLICIES

VERSION = str(yaml.safe_load((Path(__file__).parent / "PulumiPolicy.yaml").read_text())["version"])


class _Servicer(sdk._PolicyAnalyzerServicer):
    """The SDK's servicer, given the pack's own version: pulumi-policy 1.21.0 hands it "0.0.1" (policy.py L113-120,
    leaving the version to the CLI), which it writes into every preview advisory's text and diagnostic."""

    def __init__(self, name, _version, *rest):
        super().__init__(name, VERSION, *rest)


sdk._PolicyAnalyzerServicer = _Servicer  # type: ignore[misc]

PolicyPack(
    name="ascend-npu",
    description="Pinned versions and images, no public Dashboard, least privilege, node-level privilege for the NPU "
                "agents only and NPU safety for ascend-npu stacks.",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=ALL_POLICIES,
)
