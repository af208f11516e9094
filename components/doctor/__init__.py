"""Read-only checks of a running stack, over SSH and the Kubernetes API, each finding tied to a field symptom."""
