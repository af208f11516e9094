"""Every rule of the pack, one module each."""
from rules import (advertised_npu_resources, host_versions_pinned, image_pinning, least_privilege, no_public_dashboard,
                   npu_daemonset_safety, npu_version_compatibility, read_only_root_filesystem, recommended_labels,
                   single_driver_version, ssh_host_keys)

ALL_POLICIES = [
    image_pinning.POLICY,
    least_privilege.POLICY,
    no_public_dashboard.POLICY,
    npu_daemonset_safety.POLICY,
    advertised_npu_resources.POLICY,
    host_versions_pinned.POLICY,
    npu_version_compatibility.POLICY,
    single_driver_version.POLICY,
    ssh_host_keys.POLICY,
    recommended_labels.POLICY,
    read_only_root_filesystem.POLICY,
]
