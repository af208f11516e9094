"""Read-only checks of a running stack, over SSH and the Kubernetes API: findings by stable id (docs/doctor/)."""
