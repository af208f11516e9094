"""ascend-npu: read the stack spec, build the platform, export what operators look at."""
import pulumi

from components.config.config_source import load_stack_spec
from components.platform import AscendNpuPlatform, AscendNpuPlatformArgs

spec = load_stack_spec()
platform = AscendNpuPlatform(spec.cluster.name, AscendNpuPlatformArgs(spec=spec))

pulumi.export("namespace", platform.namespace)
pulumi.export("waves", platform.waves)
pulumi.export("versions", spec.versions.model_dump(by_alias=True, exclude_none=True))
pulumi.export("nodes", platform.nodes)
