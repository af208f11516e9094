"""The stack spec: the only place that reads config, and every check on it."""
from components.spec.problems import Problem, SpecError
from components.spec.stack import CONFIG_KEYS, StackSpec, parse_stack

__all__ = ["CONFIG_KEYS", "Problem", "SpecError", "StackSpec", "parse_stack"]
