"""What each of a node's host steps runs on the node (components/runner/on_node.py's NodeCall), from the stack spec."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.packages import NEEDS_ARCH, NEEDS_CHIP, Kind, PackageFile
from components.host.catalog_facts import runtime_answer, runtime_record_version
from components.host.parameters import Inputs, command_parameters, step_parameters
from components.host.script_set import step_sha256
from components.runner.on_node import NodeCall

# cri-dockerd hands a pod's runtime handler (its RuntimeClass) to Docker only from 0.4.0: Mirantis/cri-dockerd#350
# (merged 2024-04) was not taken into release/0.3 (#387 stays open), both on github.com/Mirantis/cri-dockerd.
CRI_DOCKERD_MIN_FOR_RUNTIME_CLASS = "0.4.0"
DEFAULT_STAGING = "/var/cache/ascend-npu/packages"


@dataclass(frozen=True)
class HostStep:
    """One host step of a node: what it runs there on create and update, whether its delete is the node's destroy,
    its triggers, and the SSH user it runs as."""

    name: str
    call: NodeCall
    user: str
    triggers: tuple[str, ...] = ()
    destroys: bool = False

    @property
    def create(self) -> str:
        """The command the node runs on create and update."""
        return self.call.text(self.user, self.name)

    @property
    def delete(self) -> Optional[str]:
        """The command the node runs when the step is deleted: the destroy, for the destroy record alone."""
        node = dict(self.call.params).get("ASCEND_NODE", "")
        return NodeCall("run_destroy", node=node).text(self.user, self.name) if self.destroys else None


def node_packages(spec: StackSpec, node: NodeSpec) -> tuple[PackageFile, ...]:
    """The package files a node installs (its chip and arch), in install order; the upload copies exactly these."""
    chosen = []
    for kind in Kind:
        for pkg in spec.packages.files:
            if (pkg.kind is kind and (kind not in NEEDS_CHIP or pkg.chip is node.chip)
                    and (kind not in NEEDS_ARCH or pkg.arch is node.arch)):
                chosen.append(pkg)
                break
    return tuple(chosen)


def _inputs(spec: StackSpec, node: NodeSpec, staging_dir: str) -> Inputs:
    packages = {pkg.kind: pkg for pkg in node_packages(spec, node)}
    runtime = spec.versions.docker_runtime
    return Inputs(spec, node, staging_dir, packages, runtime_record_version(runtime), runtime_answer(runtime),
                  CRI_DOCKERD_MIN_FOR_RUNTIME_CLASS, step_sha256("uninstall"))


def verify_parameters(spec: StackSpec, node: NodeSpec) -> list[tuple[str, str]]:
    """The verify step's parameters for NODE (the doctor's probe reads versions with exactly these)."""
    return step_parameters("verify", _inputs(spec, node, DEFAULT_STAGING))


def _digest(*parts: object) -> str:
    """A short hash that is the same on every run for the same parts."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:16]


def mirror_login_stdin(credentials: str) -> str:
    """The install step's stdin when the mirror needs a login: one line the script reads (ASCEND_MIRROR_LOGIN=stdin);
    it never reaches a command line or the environment."""
    return credentials.replace("\n", "") + "\n"


def _call(step: str, inputs: Inputs, scripts: tuple[str, ...]) -> NodeCall:
    """STEP's run_step call: the scripts it takes (the first runs) by SHA-256, its parameters."""
    return NodeCall("run_step", tuple((script, step_sha256(script)) for script in scripts),
                    tuple(command_parameters(step, inputs)))


def host_steps(spec: StackSpec, node: NodeSpec, staging_dir: str = DEFAULT_STAGING) -> dict[str, HostStep]:
    """The node's `install`, `verify` and `on_destroy` steps, and `npu_network` when it has one; parameters
    (parameters.py) travel in the command, never in the SSH environment, and the scripts come staged, named by their
    SHA-256 (script_set.py)."""
    inputs = _inputs(spec, node, staging_dir)
    user = spec.ssh.user
    install = HostStep("install", _call("install", inputs, ("install",)), user)
    # Verify checks what install did: it runs again whenever install's call changes (its parameters or script), as
    # a replacement, though its own call is the same. Every other step re-runs when its own call changes alone.
    verify = HostStep("verify", _call("verify", inputs, ("verify",)), user,
                      triggers=(f"install:{_digest(install.call.stored())}",))
    # What destroy does is recorded on the node by this step's create, beside the parameters the last install
    # recorded; its delete is the destroy itself (run_destroy.sh for the node). So turning rollout.uninstallOnDestroy
    # on or off re-runs this step alone, and a destroy uninstalls what the last `up` installed, as the stack said then.
    on_destroy = HostStep("on-destroy", _call("on_destroy", inputs, ("on_destroy", "uninstall")), user, destroys=True)
    steps = {"install": install, "verify": verify, "on_destroy": on_destroy}
    if node.npu_network:
        steps["npu_network"] = HostStep("npu-network", _call("npu_network", inputs, ("npu_network",)), user)
    return steps
