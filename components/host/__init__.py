"""The host layer's node side: shell scripts for Ascend nodes and the commands that run them over SSH."""
from components.host.commands import DEFAULT_STAGING, HostStep, host_steps, mirror_login_stdin, node_packages
from components.host.script_set import script_text

__all__ = ["DEFAULT_STAGING", "HostStep", "host_steps", "mirror_login_stdin", "node_packages", "script_text"]
