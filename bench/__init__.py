"""Benchmarks that print figures; nothing here asserts a time."""
