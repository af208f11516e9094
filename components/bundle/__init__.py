"""The air-gapped bundle of a stack: what to carry in, and the proof a directory holds it."""
