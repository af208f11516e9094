"""Pieces every operand's builders share: metadata and labels, pod parts, node labels, template functions."""
