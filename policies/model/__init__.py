"""What the rules read from resources: Kubernetes objects, workloads, permissions, NPU agents, host steps."""
