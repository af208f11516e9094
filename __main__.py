"""ascend-npu: read the stack spec, build the platform, export what operators look at."""
import gc

import pulumi

from components.config.config_source import load_stack_spec
from components.platform import AscendNpuPlatform, AscendNpuPlatformArgs

# The SDK keeps every resource's outputs alive until the program ends, so the heap only grows, and at the
# collector's default pace a 1000-node stack spends about 4 s of CPU rescanning it (a dozen full collections);
# young collections every 2,000 allocations and a full one at most every million bring that to about 1 s.
gc.set_threshold(2_000, 10, 50)

spec = load_stack_spec()
platform = AscendNpuPlatform(spec.cluster.name, AscendNpuPlatformArgs(spec=spec))

pulumi.export("namespace", platform.namespace)
pulumi.export("waves", platform.waves)
pulumi.export("versions", spec.versions.model_dump(by_alias=True, exclude_none=True))
pulumi.export("nodes", platform.nodes)
