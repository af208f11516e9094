"""A node's reboot wait as a local command: between install and verify when `rollout.allowReboot` is true."""
from __future__ import annotations

from typing import Optional

import pulumi
from pulumi_command import local

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.host.run_agent import agent_environment
from components.host.step_runner import runner_call
from components.runner.contract import REBOOT_FROM
from components.runner.reboot_wait import rebooted_from


def wait_command(spec: StackSpec, node: NodeSpec) -> str:
    """The shell line of NODE's wait: where to dial, the pins, the bound; never the key (the run's agent has it)."""
    return runner_call(spec, node, "reboot-wait", timeout=spec.rollout.reboot_timeout).line()


def reboot_wait(name: str, spec: StackSpec, node: NodeSpec, install: pulumi.Resource,
                install_stdout: pulumi.Output[str], parent: pulumi.Resource) -> Optional[local.Command]:
    """The wait, or None when reboots are not allowed. Its environment is the boot the install step rebooted from:
    a new one on every reboot, so the wait runs again after each install that reboots, and only then dials. It runs
    only while the program does (it has no delete), so it logs in through the run's agent like the other steps."""
    if not spec.rollout.allow_reboot:
        return None
    # A map of its own values, so a preview knows every key and only the boot is unknown: the policy pack reads
    # every other value then (policies/model/preview.py DATA_KEYS).
    environment = {REBOOT_FROM: install_stdout.apply(rebooted_from), **agent_environment(spec)}
    return local.Command(f"{name}-reboot-wait", create=wait_command(spec, node), environment=environment,
                         opts=pulumi.ResourceOptions(parent=parent, depends_on=[install]))
