"""The Helm chart of the cluster layer, generated from the same builders the Pulumi program registers."""
