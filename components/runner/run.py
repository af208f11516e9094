"""One host step on its node: the stored call resolved, the key in an agent, the files staged, the command run.

Exit: the node command's code; 2 when the stored call cannot be run as its writer meant it (nothing dialed); 255
when the node was not reached (after DIAL_ATTEMPTS dials) or the connection ended before the step did. A delete
that exits non-zero keeps the resource in the state (pulumi-command v1.2.1 local/commandController.go L93-99 returns
the error; the engine records no deletion), so a destroy this release cannot resolve never drops a node silently.
"""
from __future__ import annotations

import json
import os
import sys
import time
from contextlib import ExitStack
from datetime import datetime, timezone
from typing import Callable, Mapping, Optional

from components.runner import agent, contract, dialing
from components.runner.contract import NODE_STEPS, REBOOT_FROM, ContractError, RunnerCall
from components.runner.dialing import backoff, fatal, local_failure, redial
from components.runner.on_node import NodeCall, parse
from components.runner.openssh import Session, Streamed
from components.runner.reboot_wait import probe_command, wait
from components.runner.staging import STAGED, Staged, StageError, needed, stage

REFUSED_DESTROY = ("nothing on the node was changed and the node stays in the state. Run `pulumi destroy` (or the "
                   "`pulumi up` that removes the node) from a checkout of the release that last ran `pulumi up` on "
                   "this stack (CHANGELOG.md), or a newer one; to drop the node without uninstalling anything, "
                   "`pulumi state delete` its `-destroy` resource")


def tell(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def node_call(call: RunnerCall, environ: Mapping[str, str]) -> NodeCall:
    """What CALL runs on the node, from its environment (contract 1: the line itself, or another variable)."""
    if call.step == "destroy" and call.contract > 1:
        return NodeCall("run_destroy", node=call.node)
    text = call.command if call.contract == 1 and call.command else environ.get(call.command_from, "")
    if not text:
        raise ContractError(f"its environment has no {call.command_from}")
    found = parse(text)
    if (found.runner == "run_destroy") != (call.step == "destroy"):
        raise ContractError(f"{call.command_from} holds {found.runner}'s call, which the step `{call.step}` never runs")
    return found


def read_stdin(call: RunnerCall, given: str) -> dict:
    """What came on stdin: a JSON object, `key` (the stack's key) and `stdin` (what the node command reads: the
    mirror login); contract 1's reboot wait took the bare key, and a contract 1 line with --agent read no key."""
    if not given.strip():
        return {}
    if call.contract == 1 and call.step == "reboot-wait":
        found = {"key": given}
    else:
        found = json.loads(given)
        if not isinstance(found, dict):
            raise ValueError("not a JSON object")
    if call.contract == 1 and call.agent:
        found.pop("key", None)
    return found


def reached(answer: Streamed) -> bool:
    """Whether the remote side said anything: from then on the step may have changed the node, so no new dial."""
    return answer.code != 255 or answer.printed


def failure(answer: Streamed, step: str, node: str) -> Optional[str]:
    """The line that says why ssh itself failed, or None when the command ran and its code is the answer."""
    if answer.code != 255:
        return None
    why = answer.said or "ssh exited 255"
    if not answer.printed:
        if fatal(why):
            return (f"[{step}] node {node}: ssh refused ({why}); check the pinned host key (nodes[].hostKey, "
                    "ssh.bastion.hostKey) and that the stack's key is authorized; nothing on the node was changed")
        return (f"[{step}] node {node}: not reached after {dialing.DIAL_ATTEMPTS} dials ({why}); nothing on the node "
                "was changed")
    return (f"[{step}] node {node}: the SSH connection ended before the step did ({why}); the step carries on on the "
            "node (its log: /var/log/ascend-npu/run.log); once it ends, run `pulumi up` again")


def dial(run: Callable[[], Streamed], step: str, node: str, say: Callable[[str], None] = tell,
         sleep: Callable[[float], None] = time.sleep) -> Streamed:
    """RUN until the node is reached or a refusal no wait can change, at most DIAL_ATTEMPTS times."""
    def again(answer: Streamed, wait: float) -> None:
        say(f"[{step}] node {node}: not reached ({answer.said or 'ssh exited 255'}); dialing again in {wait:.0f} s")
    return redial(run, lambda answer: reached(answer) or fatal(answer.said), backoff(), again, sleep)


def files_of(call: RunnerCall, on_node: NodeCall) -> list[Staged]:
    """What the step stages first: the scripts its call names (and an upload stack's installers)."""
    if call.stage:  # contract 1 as its first release (b3f3745) wrote it: FILE SHA256 REMOTE_DIR on the line
        return [Staged(path, digest, directory) for path, digest, directory in call.stage]
    return needed(on_node, upload=call.upload, legacy_scripts=call.scripts)


def run_on_node(call: RunnerCall, on_node: NodeCall, session: Session, stdin: Optional[str]) -> int:
    files = files_of(call, on_node)
    answer = dial(lambda: stage(session, files), call.step, call.node) if files else None
    if answer is not None and answer.code not in (0, 255):
        tell(f"[{call.step}] node {call.node}: its files could not be staged in {STAGED} (exit {answer.code}, the "
             "line above says why); the step did not run")
        return answer.code
    if answer is None or answer.code == 0:
        answer = dial(lambda: session.stream(on_node.text(call.target.user, call.step), stdin), call.step, call.node)
    problem = failure(answer, call.step, call.node)
    if problem is not None:
        tell(problem)
    return answer.code


def waiting(node: str, text: str) -> None:
    """One line of the reboot wait's output, which the state keeps: when, which node, what."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"{stamp} reboot-wait {node}: {text}", flush=True)


def reboot_wait(call: RunnerCall, session: Session, before: str) -> int:
    def say(text: str) -> None:
        waiting(call.node, text)

    say(f"rebooted from boot {before}; waiting at most {call.timeout} s for it to come back"
        + (f" (through the bastion {call.bastion.host})" if call.bastion else ""))
    command = probe_command(call.target.user)
    problem = wait(lambda limit: session.run(command, limit), call.node, before, float(call.timeout), say)
    if problem is None:
        return 0
    tell(f"node {call.node} {problem}. Its verify step and the next waves do not run; once the node is back, run "
         "`pulumi up` again")
    return 1


def run(call: RunnerCall, environ: Mapping[str, str], given: str) -> int:
    """CALL, its environment ENVIRON and stdin GIVEN, as the local command runs them."""
    try:
        on_node = node_call(call, environ) if call.step in (*NODE_STEPS, "destroy") else None
        secrets = read_stdin(call, given)
    except ContractError as error:
        what = "the destroy" if call.step == "destroy" else f"the step {call.step}"
        tell(f"[{call.step}] node {call.node}: {what} the state stored cannot be run by this release: {error}; "
             + (REFUSED_DESTROY if call.step == "destroy" else "nothing on the node was changed"))
        return 2
    except ValueError as error:
        tell(f"[{call.step}] node {call.node}: its stdin is not the JSON the step reads ({error})")
        return 2
    if call.step == "reboot-wait" and not environ.get(REBOOT_FROM):
        waiting(call.node, "the install step rebooted nothing; nothing to wait for")
        return 0
    key = secrets.get("key")
    if key is None and not environ.get(agent.AGENT_ENV):
        tell(f"[{call.step}] node {call.node}: no key to log in with: neither the stack's key on stdin nor an SSH "
             "agent (SSH_AUTH_SOCK); nothing on the node was changed")
        return 2
    try:
        with ExitStack() as held:
            socket = held.enter_context(agent.holding(key)) if key is not None else environ[agent.AGENT_ENV]
            session = held.enter_context(Session(call.target, call.bastion, socket))
            if on_node is None:
                return reboot_wait(call, session, environ[REBOOT_FROM])
            return run_on_node(call, on_node, session, secrets.get("stdin"))
    except StageError as error:
        tell(f"[{call.step}] {error}; nothing on the node was changed")
        return 2
    except agent.AgentError as error:
        tell(f"[{call.step}] node {call.node}: {error}; nothing on the node was changed")
        return 2
    except OSError as error:
        tell(f"[{call.step}] node {call.node}: {local_failure(error)}; nothing on the node was changed")
        return 255


def main(module: str, argv: list[str]) -> int:
    """The step a stored line of MODULE (any contract) makes, run."""
    try:
        call = contract.parse(module, argv)
    except ContractError as error:
        tell(f"[host step] the line the state stored cannot be run by this release: {error}; nothing was dialed. "
             "Run `pulumi` from a checkout of the release that last ran `pulumi up` on this stack, or a newer one")
        return 2
    return run(call, os.environ, sys.stdin.read() if not sys.stdin.isatty() else "")

