"""The exact command strings of a node's host steps, built from the stack spec."""
from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.packages import NEEDS_ARCH, NEEDS_CHIP, Kind, PackageFile
from components.host.parameters import Inputs, command_parameters, step_parameters
from components.host.script_set import destroy_command, run_command, step_sha256
from components.releases.catalog import release_entry

# cri-dockerd hands a pod's runtime handler (its RuntimeClass) to Docker only from 0.4.0: Mirantis/cri-dockerd#350
# (merged 2024-04) was not taken into release/0.3 (#387 stays open), both on github.com/Mirantis/cri-dockerd.
CRI_DOCKERD_MIN_FOR_RUNTIME_CLASS = "0.4.0"
DEFAULT_STAGING = "/var/cache/ascend-npu/packages"
# Where the sudo check tells a non-root SSH user's sudo rule to go (a file of its own, written with visudo -f).
SUDOERS_FILE = "/etc/sudoers.d/ascend-npu"


@dataclass(frozen=True)
class HostStep:
    """One host step of a node: what runs on the node on create/update, what runs there on destroy, its triggers."""

    name: str
    create: str
    delete: str | None
    triggers: tuple[str, ...]


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


def runtime_record_version(release: str) -> str:
    """The `version=` value the runtime's installer records for RELEASE (`v6.0.0`), from the release catalog."""
    lines = release_entry("docker-runtime", release).installer.record.lines
    line = next(line for line in lines if line.startswith("version="))
    return line.partition("=")[2].format(version=release)


def runtime_answer(release: str) -> str:
    """What the runtime's installer of RELEASE is answered on stdin (the release catalog's prompt), or nothing."""
    prompt = release_entry("docker-runtime", release).installer.stdin_prompt
    return prompt.answer if prompt else ""


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


# A non-root user's command first checks that sudo runs PROBE (the command's own program: `env true`, `bash -c
# true`) without a password, before anything on the node is touched; when it does not, one line names the sudoers
# rule. The rule grants ALL: env and bash as root run any command, so a rule listing only them grants no less. The
# check is its own `bash -c`, joined with `&&`, so the login shell needs nothing beyond what `env ... bash -c` needs.
def sudo_prefix(user: str, step: str, probe: str) -> str:
    """Nothing for root; else the sudo check, then `sudo -n `."""
    if user == "root":
        return ""
    head = f"[{step}] ssh.user {user} needs passwordless sudo on this node (sudo -n {probe}: "
    tail = (f"): add the line \"{user} ALL=(root) NOPASSWD: ALL\" with visudo -f {SUDOERS_FILE}, then rerun; "
            "nothing on the node was changed")
    check = (f"said=$(sudo -n {probe} 2>&1 </dev/null) && exit 0; rc=$?; said=${{said//$'\\n'/ }}; "
             f"printf '%s%s%s\\n' {shlex.quote(head)} \"${{said:-exit $rc}}\" {shlex.quote(tail)} >&2; exit 1")
    return f"bash -c {shlex.quote(check)} && sudo -n "


def mirror_login_stdin(credentials: str) -> str:
    """The install step's stdin when the mirror needs a login: one line the script reads (ASCEND_MIRROR_LOGIN=stdin);
    it never reaches a command line or the environment."""
    return credentials.replace("\n", "") + "\n"


def host_steps(spec: StackSpec, node: NodeSpec, staging_dir: str = DEFAULT_STAGING) -> dict[str, HostStep]:
    """The node's `install`, `verify` and `on_destroy` steps, and `npu_network` when it has one; parameters
    (parameters.py) travel in the command, never in the SSH environment, and the scripts come from the staged set
    (script_set.py), named by their SHA-256."""
    inputs = _inputs(spec, node, staging_dir)
    versions = step_parameters("install", inputs, "versions")
    packages = step_parameters("install", inputs, "packages")
    install_settings = step_parameters("install", inputs, "settings")
    verify_settings = step_parameters("verify", inputs, "settings")
    user = spec.ssh.user
    versions_hash = f"versions:{_digest(*versions)}"
    install = HostStep(
        name="install", create=run_command(sudo_prefix(user, "install", "env true"),
                                           command_parameters("install", inputs), ("install",)), delete=None,
        triggers=(versions_hash, f"packages:{_digest(*packages)}", f"settings:{_digest(*install_settings)}",
                  f"script:{step_sha256('install')[:16]}"))
    verify = HostStep(
        name="verify", create=run_command(sudo_prefix(user, "verify", "env true"),
                                          command_parameters("verify", inputs), ("verify",)), delete=None,
        triggers=(versions_hash, f"node:{_digest(*verify_settings)}", f"script:{step_sha256('verify')[:16]}"))
    # What destroy does is recorded on the node by this step's create, beside the parameters the last install
    # recorded; its delete is one fixed text (run_destroy.sh). So turning rollout.uninstallOnDestroy on or off
    # re-runs this step alone, and a destroy uninstalls what the last `up` installed, as the stack said then.
    on_destroy = HostStep(
        name="on-destroy", create=run_command(sudo_prefix(user, "on-destroy", "env true"),
                                              command_parameters("on_destroy", inputs), ("on_destroy", "uninstall")),
        delete=destroy_command(sudo_prefix(user, "on-destroy", "bash -c true"), node.name), triggers=())
    steps = {"install": install, "verify": verify, "on_destroy": on_destroy}
    if node.npu_network:
        network = command_parameters("npu_network", inputs)
        steps["npu_network"] = HostStep(
            name="npu-network", create=run_command(sudo_prefix(user, "npu-network", "env true"), network,
                                                   ("npu_network",)), delete=None,
            triggers=(f"network:{_digest(*network)}", f"script:{step_sha256('npu_network')[:16]}"))
    return steps
