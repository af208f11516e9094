"""The host layer's node side: shell scripts for Ascend nodes and the commands that run them over SSH."""
from components.host.commands import (DEFAULT_STAGING, HostStep, host_steps, node_packages, script_text,
                                      with_mirror_credentials)

__all__ = ["DEFAULT_STAGING", "HostStep", "host_steps", "node_packages", "script_text", "with_mirror_credentials"]
