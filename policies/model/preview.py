"""What a rule does with a value `pulumi preview` cannot know yet: says which resource and which value, and judges it
at `pulumi up`, where the engine hands every input known (pulumi-policy 1.21.0 turns the error into an advisory)."""
from __future__ import annotations

import functools
from typing import Any, Callable

from pulumi_policy.proxy import UnknownValueError

from model.kube_objects import mapping

# Environment keys of ascend-npu's host steps that carry data, never a command or a key: the boot a reboot wait
# compares with (components/runner/contract.py REBOOT_FROM), known only once the node's install has run.
DATA_KEYS = frozenset({"ASCEND_NPU_REBOOT_FROM"})
PAGE = "policies/README.md, \"At preview and at up\""


def environment(props: Any) -> dict[str, Any]:
    """A command's environment without its data keys, whose values are never read (so unknown ones stay unread)."""
    env = mapping(mapping(props).get("environment"))
    return {key: env[key] for key in env if key not in DATA_KEYS}


def judged_at_up(validate: Callable[..., None]) -> Callable[..., None]:
    """VALIDATE, saying on an unknown value which resource and which value it waits for."""
    @functools.wraps(validate)
    def run(args: Any, report_violation: Callable[..., None]) -> None:
        try:
            validate(args, report_violation)
        except UnknownValueError as unknown:
            where = f"{args.resource_type} {args.name}" if hasattr(args, "resource_type") else "a resource of the stack"
            unknown.message = (f"{where}: {unknown.message} (it comes from another resource's output); this rule "
                               f"judges it at `pulumi up`, where it is known ({PAGE})")
            raise
    return run

