"""`python -m tests.runner.stored.record COMMIT...`: what a release stored for a node's host steps, as a fixture.

Each COMMIT's own program is planned offline (its `components.plan`, from `git archive COMMIT`) for the two stacks
below, and the inputs the state keeps of every command resource of the node `fake-npu-01` are written to
tests/runner/stored/<COMMIT>.yaml: the texts pulumi-command replays (a `delete`, its `environment`, whether its
`stdin` is set) and the ones a later `up` compares (`create`, `triggers`). Secrets are masked by the plan; the
stdin's form is said in the file's head. Run from the repository, with .venv.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

from tests.stacks import ROOT

NODE = "fake-npu-01"
PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDU0QpdHalnZ1zH3szZcOUbYzaVDzE+HZhT/Vx0zltGn"
BASTION_PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHn7r0qzYk1x2mXQ0b8pZ7C6d2mJr2n7f3Xk9nBq3yZt"
COMMON = """\
  ascend-npu:cluster: {name: stored, namespace: ascend-system, containerRuntime: containerd}
  ascend-npu:versions: {firmware: 7.3.0.1.231, driver: 24.1.rc2, cann: 8.0.RC3, dockerRuntime: 6.0.RC3}
  ascend-npu:validation: {enabled: false}
  ascend-npu:packages:
    source: mirror
    mirrorUrl: https://mirror.example/ascend
    files:
      - {kind: firmware, chip: 910B, file: Ascend-hdk-910b-npu-firmware_7.3.0.1.231.run, sha256: %(a)s}
      - {kind: driver, chip: 910B, arch: aarch64, sha256: %(b)s,
         file: Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run}
      - {kind: toolkit, arch: aarch64, file: Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run, sha256: %(c)s}
      - {kind: kernels, chip: 910B, arch: aarch64, sha256: %(d)s,
         file: Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run}
      - {kind: dockerRuntime, arch: aarch64, file: Ascend-docker-runtime_6.0.RC3_linux-aarch64.run, sha256: %(e)s}
""" % {k: k * 64 for k in "abcde"}
# root with the agent, no bastion; a sudo user with the stack's key behind a bastion, reboots allowed, uninstall on.
STACKS = {
    "root-agent": f"""config:
  ascend-npu:ssh: {{user: root, useAgent: true}}
  ascend-npu:nodes:
    - {{name: {NODE}, address: 10.20.0.11, hostKey: {PIN}, chip: 910B, arch: aarch64, npuCount: 8}}
{COMMON}""",
    "sudo-key-bastion": f"""config:
  ascend-npu:ssh:
    user: deploy
    port: 2222
    bastion: {{host: bastion.example, port: 22, user: jump, hostKey: {BASTION_PIN}}}
  ascend-npu:rollout: {{allowReboot: true, uninstallOnDestroy: true}}
  ascend-npu:nodes:
    - {{name: {NODE}, address: 10.20.0.11, hostKey: {PIN}, chip: 910B, arch: aarch64, npuCount: 8}}
{COMMON}""",
}
KEPT = ("create", "update", "delete", "environment", "triggers", "connection")
HEAD = """# What the program at {commit} ({subject}) stored in the Pulumi state for the host steps of node {node},
# recorded by `python -m tests.runner.stored.record {commit}` from that commit's own offline plan. `stdin: secret`
# marks a step whose stdin the state keeps as a secret: {{"key": <sshPrivateKey>}} as JSON (with the mirror login as
# "stdin" when the mirror needs one), or the bare key for the reboot wait. The `delete`, `environment` and `stdin`
# are what pulumi-command replays when the node leaves the stack or the stack is destroyed.
"""


def plan_resources(folder: Path, stack: str, text: str) -> list[dict]:
    """The COMMAND resources of NODE that FOLDER's program registers for the stack TEXT."""
    stack_file = folder / f"Pulumi.{stack}.yaml"
    stack_file.write_text(text)
    out = folder / "build" / stack
    placeholder = ["--placeholder-secrets", "sshPrivateKey"] if "key" in stack else []
    done = subprocess.run([sys.executable, "-m", "components.plan", "--stack", stack, "--stack-file", str(stack_file),
                           "--out", str(out), *placeholder], cwd=folder, capture_output=True, text=True)
    if not (out / "resources.json").exists():
        raise SystemExit(f"{folder}: the plan of {stack} failed:\n{done.stdout}{done.stderr}")
    found = []
    for resource in json.loads((out / "resources.json").read_text()):
        if resource["type"].startswith("command:") and f"-{NODE}-" in resource["name"]:
            inputs = resource["inputs"]
            kept = {key: inputs[key] for key in KEPT if key in inputs and inputs[key] not in (None, {}, [])}
            if inputs.get("stdin") is not None:
                kept["stdin"] = "secret"
            found.append({"type": resource["type"], "name": resource["name"].split(f"-{NODE}-", 1)[1], **kept})
    return sorted(found, key=lambda r: r["name"])


def record(commit: str) -> Path:
    subject = subprocess.run(["git", "log", "-1", "--format=%s", commit], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ascend-npu-release-") as scratch:
        folder = Path(scratch)
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True, check=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
        (folder / ".venv").symlink_to(ROOT / ".venv")
        (folder / "policies" / "venv").unlink(missing_ok=True)
        (folder / "policies" / "venv").symlink_to(ROOT / ".venv")
        stacks = {stack: plan_resources(folder, stack, text) for stack, text in STACKS.items()}
    short = commit[:7]
    target = Path(__file__).with_name(f"{short}.yaml")
    head = HEAD.format(commit=short, subject=subject[:60] + ("..." if len(subject) > 60 else ""), node=NODE)
    target.write_text(head + yaml.safe_dump({"commit": short, "stacks": stacks}, sort_keys=False, width=120,
                                            allow_unicode=True))
    return target


if __name__ == "__main__":
    for given in sys.argv[1:]:
        print(record(given))
