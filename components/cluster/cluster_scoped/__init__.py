"""Objects outside any operand: the agents' namespace, PriorityClass and RuntimeClass."""
