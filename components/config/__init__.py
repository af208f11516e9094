"""The stack spec: the only place that reads config, and every check on it."""
from components.config.problems import Problem, SpecError
from components.config.stack import CONFIG_KEYS, StackSpec, parse_stack

__all__ = ["CONFIG_KEYS", "Problem", "SpecError", "StackSpec", "parse_stack"]
