"""The drain's interface as the Pulumi state keeps it: a command line, its environment and its output line, versioned.

A node's drain steps are local commands whose `create` and `delete` texts the state stores; a later `up`, a node
leaving or `pulumi destroy` runs a `delete` written by whichever version of this program last updated the step.
So every text this program ever wrote must still parse and mean what it meant then: contract 1 is the form stored
before the contract had a number (no `--contract`), contract 2 adds the eviction opt-ins and the leave's choice.
"""
from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import dataclass
from typing import Optional

CONTRACT = 2
# Run from the project folder (where the CLI starts its providers) with the stack's virtualenv, as Pulumi.yaml's
# `virtualenv` names it; ASCEND_NPU_PYTHON overrides it without changing the command, so no diff follows.
PYTHON = '"${ASCEND_NPU_PYTHON:-.venv/bin/python}"'
# What the host step will change that kills NPU work; `pulumi preview --diff` shows it as the step's environment.
REASON_ENV = "ASCEND_NPU_DRAIN_FOR"
STEPS = ("before-host", "after-host", "leave")
# Pod names in the output line at most: 100 names of up to 317 characters (namespace/name) stay under 32 KiB.
LISTED = 100


class ContractError(ValueError):
    """A stored command this program cannot run as its writer meant it."""


@dataclass(frozen=True)
class DrainCall:
    """One run of the drain: the step, the node and context, and how Pods may be evicted."""

    step: str
    node: str
    context: Optional[str] = None
    timeout: int = 600
    selector: str = ""
    force: bool = False  # evict Pods that declare no controller (kubectl drain --force)
    delete_empty_dir_data: bool = False  # evict Pods with emptyDir volumes (--delete-emptydir-data)
    grace_period: Optional[int] = None  # seconds each evicted Pod gets; None: its own (--grace-period -1)
    evict: bool = False  # leave: evict the NPU Pods first (their node is about to lose its NPU software)
    reason: str = ""
    contract: int = CONTRACT

    def evicts(self) -> bool:
        return self.step == "before-host" or (self.step == "leave" and self.evict)

    def argv(self) -> list[str]:
        """The arguments after the interpreter, in the current contract."""
        args = ["-m", "components.drain", self.step, "--contract", str(CONTRACT), "--node", self.node]
        args += ["--context", self.context] if self.context else []
        if self.step == "leave" and self.evict:
            args.append("--evict")
        if self.evicts():
            args += ["--timeout", str(self.timeout)] + (["--selector", self.selector] if self.selector else [])
            args += ["--force"] if self.force else []
            args += ["--delete-emptydir-data"] if self.delete_empty_dir_data else []
            args += ["--grace-period", str(self.grace_period)] if self.grace_period is not None else []
        return args

    def command(self) -> str:
        """The shell line the local command runs."""
        return f"exec {PYTHON} " + " ".join(shlex.quote(a) for a in self.argv())

    def environment(self) -> dict[str, str]:
        return {REASON_ENV: self.reason}

    def result_line(self, result: dict) -> str:
        """The step's last output line, which the next run of the same step reads back (previous_reason). Its list
        of evicted Pods is cut at LISTED names (their count kept): pulumi-command v1.2.1 stops reading a command's
        output at a line of 64 KiB and the step never ends (util/util.go L32-53); each name is also on a line of
        its own above."""
        evicted = result.get("evicted")
        if isinstance(evicted, list) and len(evicted) > LISTED:
            result = {**result, "evicted": evicted[:LISTED], "evicted_count": len(evicted)}
        return json.dumps({"contract": CONTRACT, "node": self.node, "for": self.reason, **result}, sort_keys=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m components.drain")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("--contract", type=int, default=1, help="the contract the command was written in")
    parser.add_argument("--node", required=True)
    parser.add_argument("--context", default=None)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--selector", default="")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--delete-emptydir-data", action="store_true")
    parser.add_argument("--grace-period", type=int, default=None)
    parser.add_argument("--evict", action="store_true")
    return parser


def parse(argv: list[str], env: dict[str, str]) -> DrainCall:
    """The call a stored command line and environment make; ContractError for one from a newer program."""
    args = _parser().parse_args(argv)
    if args.contract > CONTRACT or args.contract < 1:
        raise ContractError(f"this command was written in drain contract {args.contract}, which this program "
                            f"(contract {CONTRACT}) does not know; run it from the checkout of the program that "
                            "last ran `pulumi up` on this stack")
    if args.grace_period is not None and args.grace_period < 0:
        args.grace_period = None
    # Contract 1 evicted every Pod it chose, bare and emptyDir ones included, and always evicted on leave.
    legacy = args.contract == 1
    return DrainCall(step=args.step, node=args.node, context=args.context, timeout=args.timeout,
                     selector=args.selector, force=args.force or legacy,
                     delete_empty_dir_data=args.delete_emptydir_data or legacy, grace_period=args.grace_period,
                     evict=args.evict or legacy, reason=env.get(REASON_ENV, ""), contract=args.contract)


def last_result(stdout: str) -> dict:
    """A local step's last JSON object line in STDOUT (its previous run's result line), or {} when there is none."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    try:
        result = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return {}
    return result if isinstance(result, dict) else {}


def previous_reason(stdout: str) -> Optional[str]:
    """The reason the last successful run of the step drained for: its JSON line (any contract) in STDOUT."""
    return last_result(stdout).get("for")

