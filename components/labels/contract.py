"""The label step's interface as the Pulumi state keeps it: a command line, its environment and its output line.

A node's labels are applied by a local command whose `create` and `delete` texts the state stores; a node leaving,
a renamed cluster or `pulumi destroy` runs a `delete` written by whichever version of this program last updated
the step, and an update runs `create` with the step's previous output (pulumi-command v1.2.1 passes it as
PULUMI_COMMAND_STDOUT, provider/pkg/provider/local/commandOutputs.go L88-95). So every text it ever wrote must
still parse and mean what it meant then: contract 1 is the first.
"""
from __future__ import annotations

import argparse
import json
import secrets
import shlex
from dataclasses import dataclass, field
from typing import Any, Optional

from components.drain.contract import PYTHON, ContractError, last_result

CONTRACT = 1
# The labels and taints to apply, as JSON; `pulumi preview --diff` shows them as the step's environment.
WANTED_ENV = "ASCEND_NPU_NODE_LABELS"
STEPS = ("apply", "release")
# Each step instance owns its labels under a field manager of its own, as the kubernetes provider's Patch resources
# do (`pulumi-kubernetes-<random>`): a replaced or renamed step's release then never takes off what its successor
# applied, since a field two appliers set stays while either still owns it.
MANAGER_PREFIX = "ascend-npu-labels-"


@dataclass(frozen=True)
class LabelCall:
    """One run of the label step: apply the node's labels (and taints), or release what an apply set."""

    step: str
    node: str
    context: Optional[str] = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: Optional[list[dict[str, Any]]] = None  # None: the step owns no taint

    def argv(self) -> list[str]:
        args = ["-m", "components.labels", self.step, "--contract", str(CONTRACT), "--node", self.node]
        return args + (["--context", self.context] if self.context else [])

    def command(self) -> str:
        """The shell line the local command runs."""
        return f"exec {PYTHON} " + " ".join(shlex.quote(a) for a in self.argv())

    def environment(self) -> dict[str, str]:
        wanted: dict[str, Any] = {"labels": self.labels}
        if self.taints is not None:
            wanted["taints"] = self.taints
        return {WANTED_ENV: json.dumps(wanted, sort_keys=True)}

    def released(self) -> LabelCall:
        return LabelCall("release", self.node, self.context)

    def body(self, with_wanted: bool = True) -> dict[str, Any]:
        """The server-side apply object: the node's name and, when applying, what this step owns of it."""
        metadata: dict[str, Any] = {"name": self.node}
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": metadata}
        if with_wanted:
            metadata["labels"] = dict(self.labels)
            if self.taints is not None:
                obj["spec"] = {"taints": list(self.taints)}
        return obj


def new_manager() -> str:
    return MANAGER_PREFIX + secrets.token_hex(4)


def recorded_manager(stdout: str) -> Optional[str]:
    """The field manager the step's last successful run applied with: its JSON line in STDOUT."""
    manager = last_result(stdout).get("fieldManager")
    return manager if isinstance(manager, str) and manager.startswith(MANAGER_PREFIX) else None


def result_line(call: LabelCall, manager: Optional[str], result: dict) -> str:
    """The step's last output line, which its next run (update or delete) reads back."""
    return json.dumps({"contract": CONTRACT, "node": call.node, "fieldManager": manager, **result}, sort_keys=True)


def parse(argv: list[str], env: dict[str, str]) -> LabelCall:
    """The call a stored command line and environment make; ContractError for one this program cannot run."""
    parser = argparse.ArgumentParser(prog="python -m components.labels")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("--contract", type=int, required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--context", default=None)
    args = parser.parse_args(argv)
    if args.contract != CONTRACT:
        raise ContractError(f"this command was written in label contract {args.contract}, which this program "
                            f"(contract {CONTRACT}) does not know; run it from the checkout of the program that "
                            "last ran `pulumi up` on this stack")
    if args.step == "release":
        return LabelCall("release", args.node, args.context)
    try:
        wanted = json.loads(env.get(WANTED_ENV) or "")
        labels, taints = dict(wanted["labels"]), wanted.get("taints")
    except (ValueError, KeyError, TypeError):
        raise ContractError(f"{WANTED_ENV} must hold the labels to apply as JSON ({{\"labels\": {{...}}}}); it is "
                            "set by the program, run `pulumi up` again") from None
    return LabelCall("apply", args.node, args.context, labels, taints)
