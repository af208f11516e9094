"""Every rule of the pack, one module each."""
from rules import (advertised_npu_resources, host_versions_pinned, image_pinning, least_privilege, no_public_dashboard,
                   node_privilege, npu_daemonset_safety, npu_version_compatibility, rbac_escalation_paths,
                   rbac_secrets_cluster_read, rbac_system_subjects, read_only_root_filesystem, recommended_labels,
                   service_external_ips, single_driver_version, ssh_host_key_pinning)

ALL_POLICIES = [
    image_pinning.POLICY,
    least_privilege.POLICY,
    rbac_system_subjects.POLICY,
    rbac_escalation_paths.POLICY,
    rbac_secrets_cluster_read.POLICY,
    no_public_dashboard.POLICY,
    service_external_ips.POLICY,
    node_privilege.POLICY,
    npu_daemonset_safety.POLICY,
    advertised_npu_resources.POLICY,
    host_versions_pinned.POLICY,
    npu_version_compatibility.POLICY,
    single_driver_version.POLICY,
    ssh_host_key_pinning.POLICY,
    recommended_labels.POLICY,
    read_only_root_filesystem.POLICY,
]
