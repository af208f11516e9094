"""Chart tests: the generated chart, rendered and linted by the real Helm v4 engine."""
