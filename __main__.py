"""ascend-npu: read the stack spec, build the platform, export what operators look at."""
import gc

import pulumi

from components.config.config_source import load_stack_spec
from components.platform import COLLECTOR_PACE, AscendNpuPlatform, AscendNpuPlatformArgs

gc.set_threshold(*COLLECTOR_PACE)

spec = load_stack_spec()
platform = AscendNpuPlatform(spec.cluster.name, AscendNpuPlatformArgs(spec=spec))

pulumi.export("namespace", platform.namespace)
pulumi.export("waves", platform.waves)
pulumi.export("versions", spec.versions.model_dump(by_alias=True, exclude_none=True))
pulumi.export("nodes", platform.nodes)
