"""ascend-npu: read the stack spec, build the platform, export what operators look at."""
import gc

import pulumi

from components.config.config_source import load_stack_spec
from components.host.targets import check_targets
from components.platform import COLLECTOR_PACE, ROOT_NAME, AscendNpuPlatform, AscendNpuPlatformArgs, root_aliases

gc.set_threshold(*COLLECTOR_PACE)

spec = load_stack_spec()
check_targets()
platform = AscendNpuPlatform(ROOT_NAME, AscendNpuPlatformArgs(spec=spec),
                             opts=pulumi.ResourceOptions(aliases=root_aliases(spec)))

pulumi.export("namespace", platform.namespace)
pulumi.export("waves", platform.waves)
pulumi.export("versions", spec.versions.model_dump(by_alias=True, exclude_none=True))
pulumi.export("nodes", platform.nodes)
pulumi.export("validationJobs", platform.validation_jobs)
