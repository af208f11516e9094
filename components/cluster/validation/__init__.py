"""The validation Job that proves the chain from device plugin to an NPU on a canary node."""
