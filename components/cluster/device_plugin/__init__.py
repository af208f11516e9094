"""The Ascend device plugin: its DaemonSets per chip type and the RBAC its pinned release needs."""
