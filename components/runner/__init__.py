"""The host runner: the local command every host step is, which runs the step on its node through OpenSSH.

`python -m components.runner STEP --contract N ...` (contract.py), one process per step and node, from the project
folder with the standard library alone: it reads what to run on the node from its environment (on_node.py), stages
the files that needs (staging.py), dials the node once (openssh.py, ssh_master.py; dialing.py says when to dial
again) and authenticates through an SSH agent (agent.py). What the Pulumi state stores of a step is this package's
contract, parsed by the same code whichever release wrote it.
"""
