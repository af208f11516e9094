"""`python -m components.host.node_step --step NAME --node NAME ... --scripts DIR`: one host step on its node over ssh.

Every host step of a node (install, npu-network, verify, the destroy record) is a local command of the stack that
runs this, the step's command (script_set.run_command) in its environment (ON_NODE, in script_set.stored's form): it
stages the files that command needs on the node when they are not there yet (node_files.needed), runs it there and
ends, and its `ssh` closes its connection with it. A rollout so holds one connection per step running at that
moment, where pulumi-command v1.2.1's remote steps keep every connection open until `up` ends (provider/pkg/provider/
remote/commandOutputs.go L31-40, connection.go L211-242). Stdin is a JSON object: `key` (the private key; absent with
--agent) and `stdin` (what COMMAND reads: the mirror login). Exit: COMMAND's code, or 255 when the node was not
reached (after DIAL_ATTEMPTS dials) or the connection ended before the step did.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import resource
import sys
import time
from typing import Optional

from components.host.node_files import StageError, needed, stage
from components.host.openssh import Session, Streamed, add_endpoint_arguments, endpoints
from components.host.script_set import sent

ON_NODE, ON_DESTROY = "ASCEND_NPU_ON_NODE", "ASCEND_NPU_ON_DESTROY"
# Dials of one step: a refused or timed-out connect is tried again after 1, 2, 4, 5, 5 ... s (v1.2.1 tries 10 times).
DIAL_ATTEMPTS = 10
FINAL = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED", "Permission denied",
         "no matching host key type", "Too many authentication failures")


def reached(answer: Streamed) -> bool:
    """Whether the remote side said anything: from then on the step may have changed the node, so no new dial."""
    return answer.code != 255 or answer.printed


def dial(run, step: str, node: str, tell, sleep=time.sleep) -> Streamed:
    """RUN until the node is reached, at most DIAL_ATTEMPTS times; a refusal waiting cannot change ends at once."""
    delay = 1.0
    for attempt in range(1, DIAL_ATTEMPTS + 1):
        answer = run()
        if reached(answer) or any(mark in answer.said for mark in FINAL) or attempt == DIAL_ATTEMPTS:
            return answer
        tell(f"[{step}] node {node}: not reached ({answer.said or 'ssh exited 255'}); dialing again in {delay:.0f} s")
        sleep(delay)
        delay = min(5.0, delay * 2)
    raise AssertionError("unreachable")


def failure(answer: Streamed, step: str, node: str, attempts: int) -> Optional[str]:
    """The line that says why ssh itself failed, or None when the command ran and its code is the answer."""
    if answer.code != 255:
        return None
    why = answer.said or "ssh exited 255"
    if not answer.printed:
        if any(mark in why for mark in FINAL):
            return (f"[{step}] node {node}: ssh refused ({why}); check the pinned host key (nodes[].hostKey, "
                    "ssh.bastion.hostKey) and that the stack's key is authorized; nothing on the node was changed")
        return f"[{step}] node {node}: not reached after {attempts} dials ({why}); nothing on the node was changed"
    return (f"[{step}] node {node}: the SSH connection ended before the step did ({why}); the step carries on on the "
            "node (its log: /var/log/ascend-npu/run.log); once it ends, run `pulumi up` again")


def local_failure(error: OSError) -> str:
    """Why this machine could not start the step's `ssh`, and what to do."""
    if error.errno in (errno.EMFILE, errno.ENFILE):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return (f"this machine ran out of open files starting ssh ({error.strerror}; this process may open {soft}, "
                f"at most {hard}): raise the limit of the shell or CI job that runs pulumi (`ulimit -n`, "
                "LimitNOFILE= in a systemd unit) or lower `pulumi up --parallel`")
    return f"cannot run OpenSSH here ({error}); install openssh-client on the machine that runs pulumi"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.host.node_step")
    parser.add_argument("--step", required=True)
    add_endpoint_arguments(parser)
    parser.add_argument("--scripts", default="", help="the folder of this run's rendered scripts")
    parser.add_argument("--command-from", default=ON_NODE, help="the environment variable that holds the command")
    parser.add_argument("--upload", default="", help="packages.directory, for an upload stack's install step")
    args = parser.parse_args(argv)
    command = sent(os.environ.get(args.command_from, ""))
    if not command:
        print(f"[{args.step}] {args.command_from} is empty: the step's command comes in the environment",
              file=sys.stderr)
        return 2
    given = sys.stdin.read()
    secrets = json.loads(given) if given.strip() else {}
    node, bastion = endpoints(args)

    def tell(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    try:
        with Session(node, bastion, None if args.agent else secrets.get("key")) as ssh:
            files = needed(command, args.scripts, args.upload) if args.scripts else []
            answer = dial(lambda: stage(ssh, files), args.step, args.node, tell) if files else None
            if answer is not None and answer.code not in (0, 255):
                tell(f"[{args.step}] node {args.node}: its files could not be staged in /var/tmp (exit {answer.code}, "
                     "the line above says why); the step did not run")
                return answer.code
            if answer is None or answer.code == 0:
                answer = dial(lambda: ssh.stream(command, secrets.get("stdin")), args.step, args.node, tell)
    except StageError as error:
        tell(f"[{args.step}] {error}; nothing on the node was changed")
        return 2
    except OSError as error:
        tell(f"[{args.step}] node {args.node}: {local_failure(error)}; nothing on the node was changed")
        return 255
    problem = failure(answer, args.step, args.node, DIAL_ATTEMPTS)
    if problem is not None:
        tell(problem)
    return answer.code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
