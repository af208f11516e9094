"""`pulumi up --target` and `--exclude` as the CLI running this program was given them: a node's steps run whole.

No request the engine sends a program or a policy pack carries the targets (pulumi/pulumi v3.274.0
`RunRequest`, `AnalyzeRequest`), so they are read from the command line of the `pulumi` process this program
runs under (Linux `/proc`; elsewhere, or when the program is not its descendant, nothing is checked).
docs/day-2.md, "Targeted runs", says why each refused target is unsafe.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

HOST_STEP_TYPES = ("command:remote:Command", "command:local:Command", "command:remote:CopyToRemote")
HOST_TYPE, CLUSTER_TYPE = "ascend-npu:index:AscendHost", "ascend-npu:index:AscendCluster"
# A node's label step: a local command of the cluster component (components/labels); earlier releases' NodePatch.
LABEL_TYPES = ("command:local:Command", "kubernetes:core/v1:NodePatch")
# -scripts and -packages: the copies of earlier releases, still in a stack's state until its next `up`.
STEP_SUFFIXES = ("-drain", "-scripts", "-packages", "-install", "-reboot-wait", "-npu-network", "-verify",
                 "-on-destroy", "-destroy", "-uncordon")
GUIDE = "see docs/day-2.md, Targeted runs"
COMMANDS = ("up", "update", "preview", "destroy", "refresh", "import")


@dataclass(frozen=True)
class Targeting:
    """The targeting flags of one `pulumi` command line."""

    command: str = ""
    targets: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    dependents: bool = False


def cli_argv(proc: Path = Path("/proc"), pid: Optional[int] = None, depth: int = 8) -> Optional[list[str]]:
    """The arguments of the nearest `pulumi` process above this one (the language host sits between), or None."""
    pid = os.getppid() if pid is None else pid
    for _ in range(depth):
        try:
            words = [w.decode(errors="replace") for w in (proc / str(pid) / "cmdline").read_bytes().split(b"\0") if w]
            parent = re.search(r"^PPid:\s*(\d+)", (proc / str(pid) / "status").read_text(), re.MULTILINE)
        except OSError:
            return None
        if words and os.path.basename(words[0]) == "pulumi":
            return words[1:]
        if parent is None or int(parent.group(1)) <= 1:
            return None
        pid = int(parent.group(1))
    return None


def parse(args: list[str]) -> Targeting:
    """The flags as cobra reads them: `--target X`, `--target=X`, `-t X`, `-tX`; `--target-replace` targets too."""
    # Global flags with values (`-C dir`, `--cwd dir`) may come before the command: it is the first command word.
    command = next((a for a in args if a in COMMANDS), "")
    targets: list[str] = []
    excludes: list[str] = []
    dependents = False
    words = iter(args)
    for word in words:
        name, eq, value = word.partition("=")
        if name in ("--target", "-t", "--target-replace", "--exclude"):
            value = value if eq else next(words, "")
            (excludes if name == "--exclude" else targets).append(value)
        elif word.startswith("-t") and not word.startswith("--") and len(word) > 2:
            targets.append(word[2:].lstrip("="))
        elif name == "--target-dependents":
            dependents = value.lower() not in ("false", "0")
    return Targeting(command, tuple(targets), tuple(excludes), dependents)


def _type_and_name(urn: str) -> tuple[str, str]:
    parts = urn.split("::")
    return (parts[2].split("$")[-1], parts[3]) if len(parts) >= 4 else ("", urn)


def _is_label(urn: str) -> bool:
    """Whether URN is a node's label step: a cluster component's child of a label step's type."""
    parts = urn.split("::")
    return len(parts) >= 4 and parts[2].split("$")[-1] in LABEL_TYPES and CLUSTER_TYPE in parts[2].split("$")


def _node_component(urn: str) -> str:
    """The URN of the AscendHost a host step belongs to (its parent type chain, its name without the step)."""
    parts = urn.split("::")
    if len(parts) < 4:
        return "<the node's AscendHost URN>"
    name = next((parts[3][:-len(s)] for s in STEP_SUFFIXES if parts[3].endswith(s)), parts[3])
    return "::".join([*parts[:2], parts[2].rsplit("$", 1)[0], name])


def problems(targeting: Targeting) -> list[str]:
    """Each target or exclude that would run a node's steps out of their order, with what to run instead."""
    found = []
    for urn in targeting.targets:
        kind, name = _type_and_name(urn)
        if "*" in urn:
            # What a pattern matches is known only to the engine: it is let through only where a match can be no
            # single step, and every match brings its dependents.
            if not targeting.dependents or re.search(r"command:|NodePatch|" + "|".join(STEP_SUFFIXES), urn):
                found.append(f"--target {urn}: a pattern can match one of a node's host steps or its label; name "
                             "the node's AscendHost and add --target-dependents")
        elif _is_label(urn):
            found.append(f"--target {urn}: the node's label says it is ready with the stack's driver before its host "
                         "steps ran; target the node's AscendHost with --target-dependents instead")
        elif kind in HOST_STEP_TYPES:
            found.append(f"--target {urn}: a node's host step, run alone, skips its drain, verify or uncordon "
                         f"and the canary order; run --target '{_node_component(urn)}' --target-dependents")
        elif kind == HOST_TYPE and not targeting.dependents:
            found.append(f"--target {urn}: targets none of {name}'s steps (they are its children); add "
                         "--target-dependents")
    for urn in targeting.excludes:
        kind, _ = _type_and_name(urn)
        if "*" in urn or kind in (*HOST_STEP_TYPES, HOST_TYPE) or _is_label(urn):
            found.append(f"--exclude {urn}: leaves a gap in a node's steps or in the waves; run without it")
    return found


def refusal(argv: Optional[list[str]]) -> tuple[Optional[str], bool]:
    """What to say about unsafe targets, and whether it stops the run: `pulumi up` (its preview pass too, so
    nothing is asked to be confirmed) is refused, `pulumi preview` only warned."""
    targeting = parse(argv or [])
    if targeting.command not in ("up", "update", "preview"):
        return None, False
    found = problems(targeting)
    if not found:
        return None, False
    stop = targeting.command != "preview"
    head = ("pulumi up refused, nothing was changed: " if stop else "pulumi up would refuse these: ") + \
        f"these targets would run a node's steps out of order ({GUIDE}):"
    return head + "\n" + "\n".join(f"  - {line}" for line in found), stop


def check_targets() -> None:
    """Stop `pulumi up` with unsafe targets before anything is registered; under the offline plan, nothing."""
    import pulumi
    from pulumi.runtime import settings
    from pulumi.runtime.mocks import MockMonitor

    if isinstance(settings.get_monitor(), MockMonitor):
        return
    message, stop = refusal(cli_argv())
    if message and stop:
        raise pulumi.RunError(message)
    if message:
        pulumi.log.warn(message)
