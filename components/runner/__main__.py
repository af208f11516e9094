"""`python -m components.runner STEP --contract 2 --node NAME ...`: one host step on its node (run.py)."""
import sys

from components.runner.contract import MODULE
from components.runner.run import main

sys.exit(main(MODULE, sys.argv[1:]))
