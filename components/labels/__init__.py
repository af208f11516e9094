"""A node's labels and taints, applied and released by a local command of the stack (server-side apply)."""
