"""The probe over SSH with the OpenSSH client: pinned host keys, the bastion as a jump host, bounded time."""
from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from components.config import StackSpec
from components.config.hosts import NodeSpec
from components.config.npu_network import entries
from components.host.commands import verify_parameters
from components.host.script_set import SCRIPTS
from components.runner.contract import Endpoint
from components.runner.openssh import ssh_argv

PROBE = Path(__file__).with_name("probe.sh")
MARK = "==ascend-npu-doctor== "
# Sections named by their first word and the next (`file driver PATH` is `file:driver`).
NAMED = ("file", "version", "log")


@dataclass
class HostReport:
    """What the probe read on one node: sections by name, or why it could not be read."""

    node: str
    sections: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (header words, body)
    error: Optional[str] = None

    def body(self, name: str) -> str:
        return self.sections.get(name, ("", ""))[1]

    def header(self, name: str) -> str:
        return self.sections.get(name, ("", ""))[0]


def parse(node: str, text: str) -> HostReport:
    """Split the probe's output into its sections (`==ascend-npu-doctor== NAME WORDS...`)."""
    report, name, words = HostReport(node), None, ""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(MARK):
            if name is not None:
                report.sections[name] = (words, "\n".join(lines).strip("\n"))
            parts = line[len(MARK):].split(None, 1)
            name, words, lines = parts[0] if parts else "", parts[1] if len(parts) > 1 else "", []
            if name in NAMED:  # `file KIND PATH`: one section per kind
                kind, _, words = words.partition(" ")
                name = f"{name}:{kind}"
        elif name is not None:
            lines.append(line)
    if name is not None:
        report.sections[name] = (words, "\n".join(lines).strip("\n"))
    if "end" not in report.sections:
        report.error = "the probe stopped before its end"
    return report


def ssh_command(spec: StackSpec, node: NodeSpec, folder: str, identity: Optional[str], timeout: int) -> list[str]:
    """`ssh` with only this node's (and the bastion's) pinned keys trusted, no prompt, no agent unless useAgent."""
    ssh = spec.ssh
    target = Endpoint(node.address, ssh.port, ssh.user, node.host_key)
    bastion = (Endpoint(ssh.bastion.host, ssh.bastion.port, ssh.bastion.user or ssh.user, ssh.bastion.host_key)
               if ssh.bastion is not None else None)
    sudo = "" if ssh.user == "root" else "sudo -n "
    return [*ssh_argv(target, bastion, Path(folder) / "known_hosts", identity, min(timeout, 15)), f"{sudo}bash -s"]


def probe_script(spec: StackSpec, node: NodeSpec, bundle: bool = False) -> str:
    """The probe as it runs on NODE: the verify step's parameters, the host steps' lib.sh, then probe.sh."""
    params = [*verify_parameters(spec, node), ("STEP", "doctor"), ("DOCTOR_BUNDLE", "true" if bundle else "false"),
              ("ASCEND_NPU_NETWORK", entries(node.npu_network))]
    assignments = "".join(f"{key}={shlex.quote(value)}\n" for key, value in params)
    return assignments + (SCRIPTS / "lib.sh").read_text() + PROBE.read_text()


def probe(spec: StackSpec, node: NodeSpec, identity: Optional[str], timeout: int, bundle: bool = False) -> HostReport:
    """Run the probe on NODE within TIMEOUT seconds (BUNDLE: the step logs too); a report with `error` when it
    could not."""
    with tempfile.TemporaryDirectory(prefix="ascend-npu-doctor-") as folder:
        words = ssh_command(spec, node, folder, identity, timeout)
        try:
            # ssh_argv quotes the bastion's ProxyCommand for /bin/sh, which ssh runs it with as $SHELL.
            done = subprocess.run(words, input=probe_script(spec, node, bundle), capture_output=True, text=True,
                                  timeout=timeout, env={**os.environ, "SHELL": "/bin/sh"})
        except subprocess.TimeoutExpired:
            return HostReport(node.name, error=f"no answer over SSH within {timeout} s")
        except OSError as err:
            return HostReport(node.name, error=f"cannot run ssh: {err}")
    if done.returncode != 0 and MARK not in done.stdout:
        last = (done.stderr.strip().splitlines() or [f"ssh exited {done.returncode}"])[-1]
        return HostReport(node.name, error=f"SSH to {spec.ssh.user}@{node.address}:{spec.ssh.port} failed: {last}")
    return parse(node.name, done.stdout)
