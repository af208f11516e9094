"""`AscendHost`: one node's host steps, each a local command that runs it over OpenSSH (components/runner), from
staged files to a verified NPU stack, and the destroy."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

import pulumi
from pulumi_command import local, remote

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.packages import Source
from components.host.commands import DEFAULT_STAGING, HostStep, host_steps, mirror_login_stdin
from components.host.drain_steps import drain_steps
from components.host.reboot_steps import reboot_wait
from components.host.review import review_facts
from components.host.run_agent import agent_environment
from components.host.step_runner import destroy_command, step_command, step_stdin

# Uploaded installers land in /var/tmp/<the directory's name>, where pulumi-command v1.2.1's CopyToRemote put them
# before (provider/pkg/provider/remote/copyController.go); file modes are not kept, so the installers run as
# `bash FILE`.
UPLOAD_PARENT = "/var/tmp"


@dataclass(frozen=True)
class AscendHostArgs:
    """The stack, the node, and the resources that must finish before this node starts (the previous wave)."""

    spec: StackSpec
    node: NodeSpec
    after: Sequence[pulumi.Resource] = field(default_factory=tuple)
    wave: int = 0


def legacy_connection(spec: StackSpec, node: NodeSpec) -> remote.ConnectionArgs:
    """The node's address and pin for the remote `-on-destroy` that no longer dials: no key, no bastion."""
    return remote.ConnectionArgs(host=node.address, port=spec.ssh.port, user=spec.ssh.user, host_key=node.host_key)


def host_facts(spec: StackSpec, node: NodeSpec) -> dict:
    """What the component states about its node, for reviewers and the policy pack (versions, override)."""
    override = spec.versions.compatibility_override
    return {"node": node.name, "chip": node.chip.value, "arch": node.arch.value, "npuCount": node.npu_count,
            "containerRuntime": node.container_runtime.value,
            "versions": {"mindCluster": spec.versions.mind_cluster, "firmware": spec.versions.firmware,
                         "driver": spec.versions.driver, "cann": spec.versions.cann,
                         "dockerRuntime": spec.versions.docker_runtime},
            "compatibilityOverride": _override_facts(override)}


def _override_facts(override) -> Optional[dict]:
    """The override's reason, and the runtime of another MindCluster release it keeps, when it names one."""
    if override is None:
        return None
    return {"reason": override.reason, **({"dockerRuntime": override.docker_runtime} if override.docker_runtime
                                          else {})}


def _verified(stdout: Optional[str]) -> dict:
    """The JSON object the verify step prints last; empty while unknown (preview) or absent."""
    lines = [line for line in (stdout or "").splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def uploads(spec: StackSpec) -> tuple[str, str]:
    """Where the nodes' installers are staged, and with source `upload` the local folder the install step sends the
    node's own ones from ("" otherwise)."""
    if spec.packages.source is not Source.UPLOAD:
        return DEFAULT_STAGING, ""
    directory = (spec.packages.directory or "").rstrip("/")  # the config requires it with upload
    return f"{UPLOAD_PARENT}/{os.path.basename(directory)}", directory


class AscendHost(pulumi.ComponentResource):
    """A node: NPU stack and container runtime installed, verified, what its destroy does recorded on it."""

    install: local.Command
    reboot_wait: Optional[local.Command]
    npu_network: Optional[local.Command]
    verify: local.Command
    destroy: local.Command
    on_destroy: remote.Command
    verified: pulumi.Output[dict]

    def __init__(self, name: str, args: AscendHostArgs, opts: Optional[pulumi.ResourceOptions] = None):
        spec, node = args.spec, args.node
        facts = host_facts(spec, node)
        # The review is an input alone: a preview shows it, and the state keeps it once (the outputs are the facts).
        super().__init__("ascend-npu:index:AscendHost", name, {**facts, "review": review_facts(spec, node, args.wave)},
                         opts)
        self._spec, self._node = spec, node
        after = list(args.after)
        staging, upload = uploads(spec)
        steps = host_steps(spec, node, staging_dir=staging)
        mirror_login = None
        if spec.mirror_credentials is not None and spec.packages.source is Source.MIRROR:
            mirror_login = pulumi.Output.secret(spec.mirror_credentials).apply(mirror_login_stdin)
        drains = drain_steps(spec, node) if spec.rollout.drain.enabled else None
        first = list(after)
        if drains is not None:
            self.drain = self._local(f"{name}-drain", drains.drain, None, drains.environment, after)
            # The drain already waits for the previous wave: the install's edge to it alone orders both, and the
            # state keeps one URN instead of one per node of that wave.
            first = [self.drain]
        self.install = self._step(name, steps["install"], first, upload=upload, stdin=mirror_login)
        self.reboot_wait = reboot_wait(name, spec, node, self.install, self.install.stdout, self)
        back = [self.install, *([self.reboot_wait] if self.reboot_wait else [])]
        # The NPU network (RoCE) once the driver is in and the node back: hccn_tool comes with the driver.
        self.npu_network = self._step(name, steps["npu_network"], back) if "npu_network" in steps else None
        self.verify = self._step(name, steps["verify"], back + ([self.npu_network] if self.npu_network else []),
                                 triggers=list(steps["verify"].triggers))
        # Records on the node what a destroy does there; its delete is that destroy (run_destroy.sh), over ssh too.
        self.destroy = self._step(name, steps["on_destroy"], [self.install], suffix="destroy", destroy=True)
        # Earlier releases' destroy, a remote command whose stored delete pulumi-command would replay over a
        # connection it keeps open until the run ends (remote/commandOutputs.go L31-40): kept under its name with no
        # command at all, so their stacks' next `up` clears that delete (an update that runs nothing: v1.2.1
        # commandController.go Update) and no step of it ever dials. Deleted before the destroy above.
        self.on_destroy = remote.Command(
            f"{name}-on-destroy", connection=legacy_connection(spec, node), add_previous_output_in_env=False,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.destroy]))
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
        # A stack policy sees a component's outputs, not its inputs: the facts are stated again for it. What verify
        # found is the stack's `nodes` output (platform.py), not stored a third time here beside verify's stdout.
        self.register_outputs(facts)

    def _local(self, name: str, create: str, delete: Optional[str], environment: dict[str, str],
               after: list) -> local.Command:
        # A changed reason (its environment) updates the step, which runs `create` again; never a replace, whose
        # delete of the old `uncordon` would drain the node as if it left the stack.
        return local.Command(name, create=create, delete=delete, environment=environment,
                             opts=pulumi.ResourceOptions(parent=self, depends_on=after))

    def _step(self, name: str, step: HostStep, after: list, triggers: Optional[list] = None, upload: str = "",
              stdin: pulumi.Input[str] | None = None, suffix: str = "", destroy: bool = False) -> local.Command:
        # No previous output in the environment: an install's output can pass the 128 KiB Linux allows one variable
        # (MAX_ARG_STRLEN), and v1.2.1 adds it by default (provider/pkg/provider/local/commandOutputs.go L88-95).
        # Every step logs in through an agent: the run's (run_agent.py), which holds the key while the program runs;
        # only the destroy, whose delete runs without the program, keeps the key, on its stdin (v1.2.1 runs `delete`
        # with the stored environment and stdin: local/commandController.go L93-99), for an agent of its own.
        create, environment = step_command(self._spec, self._node, step, upload)
        delete = destroy_command(self._spec, self._node) if destroy else None
        return local.Command(f"{name}-{suffix or step.name}", create=create, delete=delete,
                             environment={**environment, **(agent_environment(self._spec) if not destroy else {})},
                             stdin=step_stdin(self._spec, key=destroy, stdin=stdin),
                             triggers=triggers, add_previous_output_in_env=False,
                             opts=pulumi.ResourceOptions(parent=self, depends_on=after))
