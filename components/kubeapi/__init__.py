"""The stack's own Kubernetes API, reached as the kubernetes provider reaches it: kubeconfig, context, REST."""
