"""`AscendHost`: one node's host steps as remote commands, from staged packages to a verified NPU stack."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import pulumi
from pulumi_command import local, remote

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.packages import Source
from components.host.commands import DEFAULT_STAGING, HostStep, host_steps, mirror_login_stdin
from components.host.drain_steps import drain_steps
from components.host.reboot_steps import reboot_wait
from components.host.script_set import STAGED_PARENT, local_script_set

# The upload lands at /var/tmp/<directory name>: pulumi-command v1.2.1 copies a directory source into
# `remotePath/<its name>`, creating a missing remotePath first (provider/pkg/provider/remote/copyController.go);
# file modes are not kept, so the installers run as `bash FILE`.
UPLOAD_PARENT = "/var/tmp"
# Dials back off to one every 5 s: 200 tries give a rebooting node at least about 16 minutes to come back.
REBOOT_WAIT: dict[str, Any] = {"dial_error_limit": 200, "per_dial_timeout": 10}


@dataclass(frozen=True)
class AscendHostArgs:
    """The stack, the node, and the resources that must finish before this node starts (the previous wave)."""

    spec: StackSpec
    node: NodeSpec
    after: Sequence[pulumi.Resource] = field(default_factory=tuple)


def connection(spec: StackSpec, node: NodeSpec, wait_for_reboot: bool = False) -> remote.ConnectionArgs:
    """SSH to the node with its pinned host key, through the bastion when there is one."""
    ssh, key = spec.ssh, spec.ssh_private_key
    proxy = None
    if ssh.bastion is not None:
        proxy = remote.ProxyConnectionArgs(host=ssh.bastion.host, port=ssh.bastion.port,
                                           user=ssh.bastion.user or ssh.user, host_key=ssh.bastion.host_key,
                                           private_key=key)
    return remote.ConnectionArgs(host=node.address, port=ssh.port, user=ssh.user, host_key=node.host_key,
                                 private_key=key, proxy=proxy, **(REBOOT_WAIT if wait_for_reboot else {}))


def host_facts(spec: StackSpec, node: NodeSpec) -> dict:
    """What the component states about its node, for reviewers and the policy pack (versions, override)."""
    override = spec.versions.compatibility_override
    return {"node": node.name, "chip": node.chip.value, "arch": node.arch.value, "npuCount": node.npu_count,
            "containerRuntime": node.container_runtime.value,
            "versions": {"firmware": spec.versions.firmware, "driver": spec.versions.driver,
                         "cann": spec.versions.cann, "dockerRuntime": spec.versions.docker_runtime},
            "compatibilityOverride": {"reason": override.reason} if override else None}


def _verified(stdout: Optional[str]) -> dict:
    """The JSON object the verify step prints last; empty while unknown (preview) or absent."""
    lines = [line for line in (stdout or "").splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def restage_triggers(node: NodeSpec, spec: StackSpec) -> list[str]:
    """A copy lands again when the host it went to changes: only `triggers` makes CopyToRemote v1.2.1 copy anew
    (copyController.go Update copies only on a new source hash or remotePath)."""
    return [f"{spec.ssh.user}@{node.address}:{spec.ssh.port}"]


class AscendHost(pulumi.ComponentResource):
    """A node: scripts and packages staged, NPU stack and container runtime installed, verified, destroy recorded."""

    install: remote.Command
    reboot_wait: Optional[local.Command]
    npu_network: Optional[remote.Command]
    verify: remote.Command
    on_destroy: remote.Command
    verified: pulumi.Output[dict]

    def __init__(self, name: str, args: AscendHostArgs, opts: Optional[pulumi.ResourceOptions] = None):
        spec, node = args.spec, args.node
        facts = host_facts(spec, node)
        super().__init__("ascend-npu:index:AscendHost", name, facts, opts)
        conn = connection(spec, node)
        after = list(args.after)
        copy, moved = pulumi.ResourceOptions(parent=self, depends_on=after), restage_triggers(node, spec)
        self.scripts = remote.CopyToRemote(
            f"{name}-scripts", connection=conn, source=pulumi.FileArchive(local_script_set()),
            remote_path=STAGED_PARENT, triggers=moved, opts=copy)
        staged: list[pulumi.Resource] = [self.scripts]
        staging = DEFAULT_STAGING
        if spec.packages.source is Source.UPLOAD:
            directory = (spec.packages.directory or "").rstrip("/")  # the config requires it with upload
            staging = f"{UPLOAD_PARENT}/{os.path.basename(directory)}"
            self.packages = remote.CopyToRemote(
                f"{name}-packages", connection=conn, source=pulumi.FileArchive(directory), remote_path=UPLOAD_PARENT,
                triggers=moved, opts=copy)
            staged.append(self.packages)
        steps = host_steps(spec, node, staging_dir=staging)
        install_stdin = None
        if spec.mirror_credentials is not None and spec.packages.source is Source.MIRROR:
            install_stdin = pulumi.Output.secret(spec.mirror_credentials).apply(mirror_login_stdin)
        drains = drain_steps(spec, node) if spec.rollout.drain.enabled else None
        if drains is not None:
            self.drain = self._local(f"{name}-drain", drains.drain, None, drains.environment, after)
            staged.append(self.drain)
        self.install = self._command(name, steps["install"], conn, staged, stdin=install_stdin)
        self.reboot_wait = reboot_wait(name, spec, node, self.install, self.install.stdout, self)
        # Direct, verify's own dials wait too (as before the wait step, so such stacks see no change); through a
        # bastion v1.2.1 cannot carry that wait (remote/connection.go L222-241), so the wait step alone does it.
        dial_wait = spec.rollout.allow_reboot and spec.ssh.bastion is None
        back = [self.install, *([self.reboot_wait] if self.reboot_wait else [])]
        after_boot = connection(spec, node, dial_wait)
        # The NPU network (RoCE) once the driver is in and the node back: hccn_tool comes with the driver.
        self.npu_network = (self._command(name, steps["npu_network"], after_boot, back)
                            if "npu_network" in steps else None)
        self.verify = self._command(name, steps["verify"], after_boot,
                                    back + ([self.npu_network] if self.npu_network else []),
                                    triggers=list(steps["install"].triggers) + list(steps["verify"].triggers))
        self.on_destroy = self._command(name, steps["on_destroy"], conn, [self.install])
        # The last step of the node: what the next wave and the node's labels wait for. Deleted first when the node
        # leaves (it depends on on-destroy), so the node is drained before anything is uninstalled.
        self.ready: pulumi.Resource = self.verify
        if drains is not None:
            self.uncordon = self._local(f"{name}-uncordon", drains.uncordon, drains.leave, drains.environment,
                                        [self.verify, self.on_destroy])
            self.ready = self.uncordon
        self.verified = (self.verify.stdout.apply(_verified) if self.npu_network is None else
                         pulumi.Output.all(self.verify.stdout, self.npu_network.stdout).apply(
                             lambda outs: {**_verified(outs[0]), "npuNetwork": _verified(outs[1])}))
        # A stack policy sees a component's outputs, not its inputs: the facts are stated again for it.
        self.register_outputs({**facts, "verified": self.verified})

    def _local(self, name: str, create: str, delete: Optional[str], environment: dict[str, str],
               after: list) -> local.Command:
        # A changed reason (its environment) updates the step, which runs `create` again; never a replace, whose
        # delete of the old `uncordon` would drain the node as if it left the stack.
        return local.Command(name, create=create, delete=delete, environment=environment,
                             opts=pulumi.ResourceOptions(parent=self, depends_on=after))

    def _command(self, name: str, step: HostStep, conn: remote.ConnectionArgs, after: list,
                 triggers: Optional[list] = None, stdin: pulumi.Input[str] | None = None) -> remote.Command:
        # No previous output as SSH env requests (sshd refuses them, a warning on every re-run): remote/command.go
        # addPreviousOutputInEnv defaults to true in v1.2.1.
        return remote.Command(f"{name}-{step.name}", connection=conn, create=step.create, stdin=stdin,
                              delete=step.delete, triggers=triggers, add_previous_output_in_env=False,
                              opts=pulumi.ResourceOptions(parent=self, depends_on=after))
