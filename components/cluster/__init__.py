"""The cluster layer: Kubernetes objects built as plain data from the spec."""
