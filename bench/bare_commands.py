"""The bare program of the real-engine bench: `bare:count` local commands, no parent, no edge, trivial inputs."""
import pulumi
from pulumi_command import local

for i in range(pulumi.Config("bare").require_int("count")):
    local.Command(f"bare-{i}", create="true")
