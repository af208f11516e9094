"""A host step's local command line as the Pulumi state keeps it, versioned: every form a release stored parses here.

A node's host steps are `command:local:Command`s whose `create`, `delete`, `environment` and `stdin` the state stores;
pulumi-command v1.2.1 replays a stored `delete` with its stored environment and stdin when the node leaves the stack
or the stack is destroyed (provider/pkg/provider/local/commandController.go L93-99), whichever release wrote it. So
the line is a contract: contract 1 is every form stored before it had a number (`-m components.host.node_step` and
`-m components.host.reboot_wait`, releases b3f3745 to 48a258d; tests/runner/stored/), contract 2 names it.
"""
from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from typing import Optional

CONTRACT = 2
MODULE = "components.runner"
# Run from the project folder (where the CLI starts its providers) with the stack's virtualenv; ASCEND_NPU_PYTHON
# names another interpreter without changing the stored line (components/drain/contract.py spells it alike).
PYTHON = '"${ASCEND_NPU_PYTHON:-.venv/bin/python}"'
# What contract 1's lines ran, and which step of this runner each is.
LEGACY = {"components.host.node_step": "", "components.host.reboot_wait": "reboot-wait"}
# install, verify, the NPU network and the destroy record run what ON_NODE names; `destroy` is the destroy itself
# (run_destroy.sh for the node); `reboot-wait` dials until a rebooted node is back.
NODE_STEPS = ("install", "verify", "npu-network", "on-destroy")
STEPS = (*NODE_STEPS, "destroy", "reboot-wait")
ON_NODE = "ASCEND_NPU_ON_NODE"
# Contract 1's destroy read its command from here (`--command-from ASCEND_NPU_ON_DESTROY`).
ON_DESTROY = "ASCEND_NPU_ON_DESTROY"
REBOOT_FROM = "ASCEND_NPU_REBOOT_FROM"


class ContractError(ValueError):
    """A stored line this program cannot run as its writer meant it."""


@dataclass(frozen=True)
class Endpoint:
    """Where `ssh` connects: address, port, user and the pinned host key (`TYPE BASE64`)."""

    host: str
    port: int
    user: str
    host_key: str

    @property
    def address(self) -> str:
        """`HOST:PORT`, an IPv6 address in brackets."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def endpoint(text: str, user: str, key: str) -> Endpoint:
    """`HOST:PORT` (`[V6]:PORT`) as an Endpoint; ContractError when it is no such thing."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ContractError(f"`{text}` is no HOST:PORT")
    return Endpoint(host.strip("[]"), int(port), user, key)


@dataclass(frozen=True)
class RunnerCall:
    """One host step's local command: the step, the node and how to reach it, and what the step needs here."""

    step: str
    node: str
    target: Endpoint
    bastion: Optional[Endpoint] = None
    upload: str = ""  # packages.directory: an upload stack's install sends the node its own installers from here
    timeout: int = 0  # the reboot wait's bound (rollout.rebootTimeout)
    contract: int = CONTRACT
    # Contract 1 only: the key was not on stdin (`--agent`), where the scripts were rendered, which variable held
    # the command, and the copies and command its first release put on the line itself.
    agent: bool = False
    scripts: str = ""
    command_from: str = ON_NODE
    stage: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)
    command: str = ""

    def argv(self) -> list[str]:
        """The arguments after `-m components.runner`, in the current contract."""
        args = [self.step, "--contract", str(CONTRACT), "--node", self.node, "--address", self.target.address,
                "--user", self.target.user, "--host-key", self.target.host_key]
        if self.bastion is not None:
            args += ["--bastion", self.bastion.address, "--bastion-user", self.bastion.user,
                     "--bastion-host-key", self.bastion.host_key]
        args += ["--upload", self.upload] if self.upload else []
        args += ["--timeout", str(self.timeout)] if self.step == "reboot-wait" else []
        return args

    def line(self) -> str:
        """The shell line the local command runs."""
        return f"exec {PYTHON} -m {MODULE} " + " ".join(shlex.quote(arg) for arg in self.argv())


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # a stored line is data: never print usage and exit
        raise ContractError(message)


def _parser(module: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"python -m {module}", add_help=False)
    if module == MODULE:
        parser.add_argument("step", choices=STEPS)
        parser.add_argument("--contract", type=int, required=True)
    else:
        parser.add_argument("--step", default=LEGACY[module])
        parser.add_argument("--agent", action="store_true")
        parser.add_argument("--scripts", default="")
        parser.add_argument("--command-from", default=ON_NODE)
        parser.add_argument("--stage", nargs=3, action="append", default=[])
        parser.add_argument("command", nargs="?", default="")
    for name in ("--node", "--address", "--user", "--host-key"):
        parser.add_argument(name, required=True)
    for name in ("--bastion", "--bastion-user", "--bastion-host-key"):
        parser.add_argument(name)
    parser.add_argument("--upload", default="")
    parser.add_argument("--timeout", type=int, default=0)
    return parser


def parse(module: str, argv: list[str]) -> RunnerCall:
    """The call a stored line makes (MODULE: the one it runs); ContractError for a line no release wrote or one
    of a newer contract than this program knows."""
    if module not in (MODULE, *LEGACY):
        raise ContractError(f"`-m {module}` is no host runner")
    args = _parser(module).parse_args(argv)
    contract = args.contract if module == MODULE else 1
    if not 1 <= contract <= CONTRACT or module == MODULE and contract == 1:
        raise ContractError(f"this line was written in host runner contract {contract}, which this program "
                            f"(contract {CONTRACT}) does not know; run `pulumi` from a checkout of the release "
                            "that last ran `pulumi up` on this stack, or a newer one")
    # Contract 1's destroy record was the step `on-destroy` too; its delete said so by --command-from.
    step = args.step
    if contract == 1 and args.command_from == ON_DESTROY:
        step = "destroy"
    if step not in STEPS:
        raise ContractError(f"`--step {step}` is no host step (the steps: {', '.join(STEPS)})")
    bastion = None
    if args.bastion:
        if not args.bastion_host_key:
            raise ContractError("--bastion without --bastion-host-key")
        bastion = endpoint(args.bastion, args.bastion_user or args.user, args.bastion_host_key)
    legacy = {"agent": args.agent, "scripts": args.scripts, "command_from": args.command_from,
              "stage": tuple(tuple(s) for s in args.stage), "command": args.command} if contract == 1 else {}
    return RunnerCall(step=step, node=args.node, target=endpoint(args.address, args.user, args.host_key),
                      bastion=bastion, upload=args.upload, timeout=args.timeout, contract=contract, **legacy)


def parse_line(line: str) -> RunnerCall:
    """The call of a stored shell line: `exec PYTHON -m MODULE ARGS...` (the interpreter as any word)."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise ContractError(f"the line does not parse as shell words ({error})") from None
    if words[:1] == ["exec"]:
        words = words[1:]
    if len(words) < 3 or words[1] != "-m":
        raise ContractError("the line runs no `-m MODULE`")
    return parse(words[2], words[3:])
