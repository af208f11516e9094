"""Cordon, evict and uncordon a node around a host change, from the machine that runs `pulumi up`."""
