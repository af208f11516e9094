"""Optional read-only Kubernetes Dashboard access to the agents' namespace."""
