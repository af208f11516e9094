"""What a host step runs on its node: stored in its environment as data, sent to the node as today's runner text.

The node side of every step is one of two small runners (node/run_step.sh, node/run_destroy.sh), inlined in the
command with `bash -c`: run_step takes the staged scripts the command names by SHA-256 and runs the first; run_destroy
does what the node's own record says. Contract 2 stores run_step's call alone (`ascend-npu STEP SHA256 ... K=V ...`)
and run_destroy's not at all (the destroy line names the node). Contract 1 stored whole commands: the sudo check, the
parameters and the runner, written out (before 5c09365) or named (`bash -c "$ASCEND_NPU_RUN_STEP"`). Every form is
parsed into a NodeCall and sent as today's text; a runner this program does not know is refused, never sent.
"""
from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from components.runner.contract import ContractError

NODE = Path(__file__).with_name("node")
RUNNERS = ("run_step", "run_destroy")
# The names contract 1's stored commands call the runners by (5c09365 to 48a258d).
NAMED = {"$ASCEND_NPU_RUN_STEP": "run_step", "$ASCEND_NPU_RUN_DESTROY": "run_destroy"}
# The SHA-256 of each runner text contract 1 stored written out (b3f3745 to c24ca6f), as inlined (comment lines
# dropped): run_step.sh of 8c62b1e, whose one difference from today's is its failure's advice, and run_destroy.sh,
# unchanged since. tests/runner/test_stored_texts.py finds every runner text of the fixtures here.
WRITTEN_OUT = {"b9c7293ab5649265bf9d2f61552f7b6066687e6bf8e3dc461184e269fea418a8": "run_step",
               "c83f890d99e8f6e4a34ecdb5cf78ad1c74623e4315e2b8197ac69490ad040e9e": "run_destroy"}
# The program each runner's sudo check runs, and the step its messages name.
PROBES = {"run_step": "env true", "run_destroy": "bash -c true"}
DESTROY_LABEL = "on-destroy"
# Where the sudo check tells a non-root SSH user's sudo rule to go (a file of its own, written with visudo -f).
SUDOERS_FILE = "/etc/sudoers.d/ascend-npu"
CALL = "ascend-npu"
SCRIPT = re.compile(r"^[a-z_]+$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
PARAM = re.compile(r"^(ASCEND_[A-Z0-9_]+)=(.*)$", re.DOTALL)
SUDO_CHECK = re.compile(r"^said=\$\(sudo -n (env true|bash -c true) 2>&1 </dev/null\) && exit 0; ")


@lru_cache(maxsize=None)
def runner_text(name: str) -> str:
    """A runner as the command inlines it: without its comment lines, stored nowhere and sent every time."""
    lines = (NODE / f"{name}.sh").read_text().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#")) + "\n"


def sudo_prefix(user: str, label: str, probe: str) -> str:
    """Nothing for root; else a check that sudo runs PROBE without a password, before anything on the node is
    touched (one line naming the sudoers rule when it does not), then `sudo -n `. The rule grants ALL: env and bash
    as root run any command, so a rule listing only them grants no less."""
    if user == "root":
        return ""
    head = f"[{label}] ssh.user {user} needs passwordless sudo on this node (sudo -n {probe}: "
    tail = (f"): add the line \"{user} ALL=(root) NOPASSWD: ALL\" with visudo -f {SUDOERS_FILE}, then rerun; "
            "nothing on the node was changed")
    check = (f"said=$(sudo -n {probe} 2>&1 </dev/null) && exit 0; rc=$?; said=${{said//$'\\n'/ }}; "
             f"printf '%s%s%s\\n' {shlex.quote(head)} \"${{said:-exit $rc}}\" {shlex.quote(tail)} >&2; exit 1")
    return f"bash -c {shlex.quote(check)} && sudo -n "


@dataclass(frozen=True)
class NodeCall:
    """One runner's call on the node: run_step with the scripts it takes (the first runs) and the parameters, or
    run_destroy for the node named."""

    runner: str
    scripts: tuple[tuple[str, str], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    node: str = ""

    def stored(self) -> str:
        """Contract 2's text of a run_step call, for the step's environment."""
        pairs = " ".join(f"{script} {sha}" for script, sha in self.scripts)
        values = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.params)
        return f"{CALL} {pairs} {values}".rstrip()

    def text(self, user: str, label: str) -> str:
        """What the node runs: the sudo check for a user other than root, the parameters, the runner, its call."""
        prefix = sudo_prefix(user, DESTROY_LABEL if self.runner == "run_destroy" else label, PROBES[self.runner])
        inline = f"bash -c {shlex.quote(runner_text(self.runner))} {CALL}"
        if self.runner == "run_destroy":
            return f"{prefix}{inline} {shlex.quote(self.node)}"
        values = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.params)
        pairs = " ".join(f"{script} {sha}" for script, sha in self.scripts)
        return f"{prefix}env {values} {inline} {pairs}"


def _pairs(words: list[str]) -> tuple[tuple[str, str], ...]:
    pairs = tuple(zip(words[::2], words[1::2]))
    if not pairs or len(words) % 2 or not all(SCRIPT.match(s) and SHA256.match(h) for s, h in pairs):
        raise ContractError("run_step's call is not STEP SHA256 pairs")
    return pairs


def _params(words: list[str]) -> tuple[tuple[str, str], ...]:
    found = [PARAM.match(word) for word in words]
    if not all(found) or any("\n" in m.group(2) for m in found if m):
        raise ContractError("a parameter is not one ASCEND_NAME=VALUE line")
    return tuple((m.group(1), m.group(2)) for m in found if m)


def _runner(word: str) -> str:
    if word in NAMED:
        return NAMED[word]
    digest = hashlib.sha256(word.encode()).hexdigest()
    if digest in WRITTEN_OUT:
        return WRITTEN_OUT[digest]
    if word == runner_text("run_step") or word == runner_text("run_destroy"):
        return "run_step" if word == runner_text("run_step") else "run_destroy"
    shown = word if len(word) <= 40 else f"a script of {len(word)} bytes (sha256 {digest[:16]})"
    raise ContractError(f"it calls {shown} on the node, a runner this release does not know")


def parse(text: str) -> NodeCall:
    """The call a step's stored text makes on the node, in any contract's form; ContractError when it is none."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ContractError(f"it does not parse as shell words ({error})") from None
    if not words:
        raise ContractError("it is empty")
    if words[0] == CALL:
        count = next((i for i, word in enumerate(words[1:]) if "=" in word), len(words) - 1)
        return NodeCall("run_step", _pairs(words[1:1 + count]), _params(words[1 + count:]))
    if words[:2] == ["bash", "-c"] and words[3:6] == ["&&", "sudo", "-n"] and SUDO_CHECK.match(words[2]):
        words = words[6:]
    params: list[str] = []
    if words[:1] == ["env"]:
        params = [w for w in words[1:] if PARAM.match(w)]
        words = words[1 + len(params):]
    if words[:2] != ["bash", "-c"] or words[3:4] != [CALL]:
        raise ContractError("it is neither `ascend-npu STEP SHA256 ...` nor a runner's `bash -c RUNNER ascend-npu`")
    runner, args = _runner(words[2]), words[4:]
    if runner == "run_destroy":
        if len(args) != 1 or params:
            raise ContractError("run_destroy takes the node's name alone")
        return NodeCall("run_destroy", node=args[0])
    return NodeCall("run_step", _pairs(args), _params(params))
