"""`python -m components.host.reboot_wait ...`: the reboot wait's line as releases before contract 2 stored it, run
as the runner's contract 1 (components/runner/contract.py); the program writes `-m components.runner` lines."""
import sys

from components.runner.run import main

if __name__ == "__main__":
    sys.exit(main("components.host.reboot_wait", sys.argv[1:]))
