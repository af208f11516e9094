"""A stand-in for the pulumi-command resource provider plugin v1.2.1, used where the real one cannot be built."""
