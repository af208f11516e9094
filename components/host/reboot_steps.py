"""A node's reboot wait as a local command: between install and verify when `rollout.allowReboot` is true."""
from __future__ import annotations

import shlex
from typing import Optional

import pulumi
from pulumi_command import local

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.drain.contract import PYTHON
from components.host.reboot_wait import REBOOT_FROM_ENV, rebooted_from
from components.host.step_runner import endpoint_args


def wait_command(spec: StackSpec, node: NodeSpec) -> str:
    """The shell line of NODE's wait: where to dial, the pins, the bound; never the key (it goes on stdin)."""
    args = endpoint_args(spec, node)
    # Right after the node's pin, where earlier releases wrote it: the stored command stays the same, no diff.
    after_pin = args.index("--host-key") + 2
    args[after_pin:after_pin] = ["--timeout", str(spec.rollout.reboot_timeout)]
    return f"exec {PYTHON} -m components.host.reboot_wait " + " ".join(shlex.quote(a) for a in args)


def reboot_wait(name: str, spec: StackSpec, node: NodeSpec, install: pulumi.Resource,
                install_stdout: pulumi.Output[str], parent: pulumi.Resource) -> Optional[local.Command]:
    """The wait, or None when reboots are not allowed. Its environment is the boot the install step rebooted from:
    a new one on every reboot, so the wait runs again after each install that reboots, and only then dials."""
    if not spec.rollout.allow_reboot:
        return None
    stdin = pulumi.Output.secret(spec.ssh_private_key) if spec.ssh_private_key is not None else None
    return local.Command(f"{name}-reboot-wait", create=wait_command(spec, node), stdin=stdin,
                         environment=install_stdout.apply(lambda out: {REBOOT_FROM_ENV: rebooted_from(out)}),
                         opts=pulumi.ResourceOptions(parent=parent, depends_on=[install]))
