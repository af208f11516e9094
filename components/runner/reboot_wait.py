"""The wait, within a bound, for a node its install step rebooted: between its install and verify steps when
`rollout.allowReboot` is true.

Its environment names the boot the install step left (REBOOT_FROM, empty when it asked for no reboot). It dials the
node every POLL seconds until the node answers on another boot and `npu-smi info` answers (the driver loaded), or
until the bound passed (dialing.redial, the loop every step dials with).
"""
from __future__ import annotations

import shlex
import time
from typing import Callable, Optional

from components.runner.dialing import fatal, paced, redial
from components.runner.openssh import Answer

# The install step's line when it reboots the node (install.sh finish): the boot it leaves follows `from boot`.
REBOOT_LINE = "reboot required:"
FROM_BOOT = " from boot "
POLL = 5
# A node answering on the old boot this long after the install ended did not start its reboot.
NO_REBOOT_AFTER = 120
PROBE = ('r="${ASCEND_ROOT:-}"; printf "boot %s\\n" "$(cat "$r/proc/sys/kernel/random/boot_id")"; '
         'if said=$(npu-smi info 2>&1); then echo "npu-smi ok"; else echo "npu-smi ${said%%$\'\\n\'*}"; fi')


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
        if fatal(answer.said):
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
    said = {"last": ""}

    def dial() -> tuple[str, str, float]:
        state, detail = read(ssh(max(1.0, min(60.0, timeout - (clock() - start)))), before)
        return state, detail, clock() - start

    def settled(answer: tuple[str, str, float]) -> bool:
        state, _, spent = answer
        return state in ("back", "final") or state == "old-boot" and spent >= NO_REBOOT_AFTER

    def before_wait(answer: tuple[str, str, float], _: float) -> None:
        state, detail, spent = answer
        if state != said["last"]:
            tell(f"not back yet ({spent:.0f} s of {timeout:.0f} s): {detail}")
            said["last"] = state

    state, detail, spent = redial(dial, settled, paced(timeout, POLL, clock), before_wait, sleep)
    if state == "back":
        tell(f"back after {spent:.0f} s: {detail}")
        return None
    if state == "final":
        return f"{detail}: waiting cannot change that"
    if state == "old-boot" and spent >= NO_REBOOT_AFTER:
        return (f"answers on the boot it was to leave ({before}) {spent:.0f} s after the install step: the reboot "
                "did not start (see the node's journal)")
    return f"not back within {timeout:.0f} s (rollout.rebootTimeout); last answer: {detail}"
