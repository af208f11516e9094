"""`python -m components.host.reboot_wait --node NAME ...`: wait, within a bound, for a node the install step rebooted.

A local command of the stack, between a node's install and verify steps when `rollout.allowReboot` is true. Its
environment names the boot the install step left (REBOOT_FROM_ENV, empty when it asked for no reboot). It dials the
node with OpenSSH (components/host/openssh.py), through the bastion when there is one, every POLL seconds until the
node answers on another boot and `npu-smi info` answers (the driver loaded), or until `--timeout` seconds passed.
The private key, when the stack has one, comes on stdin.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from datetime import datetime, timezone
from typing import Callable, Optional

from components.host.openssh import Answer, Session, add_endpoint_arguments, endpoints

REBOOT_FROM_ENV = "ASCEND_NPU_REBOOT_FROM"
# The install step's line when it reboots the node (install.sh finish): the boot it leaves follows `from boot`.
REBOOT_LINE = "reboot required:"
FROM_BOOT = " from boot "
POLL = 5
# A node answering on the old boot this long after the install ended did not start its reboot.
NO_REBOOT_AFTER = 120
PROBE = ('r="${ASCEND_ROOT:-}"; printf "boot %s\\n" "$(cat "$r/proc/sys/kernel/random/boot_id")"; '
         'if said=$(npu-smi info 2>&1); then echo "npu-smi ok"; else echo "npu-smi ${said%%$\'\\n\'*}"; fi')
# Answers that waiting cannot change: the node's key or the stack's key is not the one pinned or authorized.
FINAL = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED", "Permission denied")


def rebooted_from(install_stdout: Optional[str]) -> str:
    """The boot id the install step rebooted the node from, or "" when it did not reboot it."""
    for line in reversed((install_stdout or "").splitlines()):
        if REBOOT_LINE in line and FROM_BOOT in line:
            return line.split(FROM_BOOT, 1)[1].split()[0]
    return ""


def probe_command(user: str) -> str:
    """What each dial runs: the boot id and whether `npu-smi info` answers, as root (sudo -n for another user)."""
    return ("sudo -n " if user != "root" else "") + "bash -c " + shlex.quote(PROBE)


def read(answer: Answer, before: str) -> tuple[str, str]:
    """(state, detail): `back`, `old-boot`, `no-driver`, `final` (waiting cannot help) or `down`."""
    if answer.code == 255 or answer.code != 0 and not answer.out:
        if any(mark in answer.said for mark in FINAL):
            return "final", answer.said
        return "down", answer.said or f"ssh exited {answer.code}"
    facts = dict(line.split(" ", 1) for line in answer.out.splitlines() if " " in line)
    boot, smi = facts.get("boot", "").strip(), facts.get("npu-smi", "").strip()
    if boot == before:
        return "old-boot", f"still on boot {before}"
    if smi != "ok":
        return "no-driver", f"on boot {boot}, npu-smi info not answering yet: {smi or 'no output'}"
    return "back", f"on boot {boot} (was {before}), sshd and npu-smi info answer"


def wait(ssh: Callable[[float], Answer], node: str, before: str, timeout: float, tell: Callable[[str], None],
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Optional[str]:
    """None once the node is back; else why it is not (the wait ran out, or waiting cannot help)."""
    start = clock()
    last = ""
    while True:
        spent = clock() - start
        state, detail = read(ssh(max(1.0, min(60.0, timeout - spent))), before)
        spent = clock() - start
        if state == "back":
            tell(f"back after {spent:.0f} s: {detail}")
            return None
        if state == "final":
            return f"{detail}: waiting cannot change that"
        if state == "old-boot" and spent >= NO_REBOOT_AFTER:
            return (f"answers on the boot it was to leave ({before}) {spent:.0f} s after the install step: the reboot "
                    "did not start (see the node's journal)")
        if state != last:
            tell(f"not back yet ({spent:.0f} s of {timeout:.0f} s): {detail}")
            last = state
        if spent >= timeout:
            return f"not back within {timeout:.0f} s (rollout.rebootTimeout); last answer: {detail}"
        sleep(min(POLL, max(0.0, timeout - spent)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.host.reboot_wait")
    add_endpoint_arguments(parser)
    parser.add_argument("--timeout", required=True)
    args = parser.parse_args(argv)
    before = os.environ.get(REBOOT_FROM_ENV, "")

    def tell(text: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        print(f"{stamp} reboot-wait {args.node}: {text}", flush=True)

    if not before:
        tell("the install step rebooted nothing; nothing to wait for")
        return 0
    node, bastion = endpoints(args)
    key = None if args.agent else sys.stdin.read()
    tell(f"rebooted from boot {before}; waiting at most {args.timeout} s for it to come back"
         + (f" (through the bastion {bastion.host})" if bastion else ""))
    try:
        with Session(node, bastion, key) as session:
            command = probe_command(node.user)
            problem = wait(lambda limit: session.run(command, limit), args.node, before, float(args.timeout), tell)
    except (OSError, RuntimeError) as error:
        problem = f"cannot run OpenSSH here ({error}); install openssh-client on the machine that runs pulumi"
    if problem is None:
        return 0
    print(f"node {args.node} {problem}. Its verify step and the next waves do not run; once the node is back, "
          "run `pulumi up` again", file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
