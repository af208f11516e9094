"""Test support that tools may import: a fake Ascend node over SSH and the host fault scenarios."""
