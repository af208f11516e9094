"""`python -m components.host.node_step ...`: the host steps' line as releases before contract 2 stored it.

A stored `delete` of such a release (a node's `-destroy`) still runs through here, as the runner's contract 1
(components/runner/contract.py); the program writes `-m components.runner` lines.
"""
import sys

from components.runner.run import main

if __name__ == "__main__":
    sys.exit(main("components.host.node_step", sys.argv[1:]))
