"""A fake Ascend node: Debian's OpenSSH sshd on loopback; every login sees a sandbox root and stand-in tools."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

from components.config import StackSpec, parse_stack
from components.config.packages import Source
from components.host import HostStep, host_steps, node_packages
from components.host.script_set import SET_STEPS, rendered
from components.runner.staging import STAGED
from testkit.fakenode import ascend_files
from testkit.fakenode.packages import NEW, PackageSet, stack_config
from testkit.fakenode.power import MARKER, PowerSupply
from testkit.fakenode.sandbox import KNOBS, LOGS, OPENEULER_2203_SP3, path_without, write_os_release
from testkit.fakenode.sshd import sshd_config, wait_listening

HERE = Path(__file__).resolve().parent
SSHD = "/usr/sbin/sshd"
STANDINS = ("uname", "lspci", "systemctl", "getent", "dockerd", "cri-dockerd", "npu-smi", "df", "ifconfig", "modinfo",
            "sudo")
DEFAULT_KNOBS = {"arch": "aarch64", "kernel": "5.10.0-182.0.0.95.oe2203sp3.aarch64"}
STAGING = "var/cache/ascend-npu/packages"
NODE_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
# What a board of each chip shows: its PCI device under Huawei's vendor 19e5 (d802 910B, d500 310P, as Huawei's
# log-collection script for CANN names them: PCIE_BDF_910B, PCIE_BDF_310P) and its `npu-smi info` fixture.
CHIP_KNOBS = {"910B": {"pci-device": "d802", "npu-smi-fixture": "910b"},
              "310P": {"pci-device": "d500", "npu-smi-fixture": "310p-duo"}}


def missing_requirements() -> str | None:
    """Why a fake node cannot run here, or None."""
    if os.geteuid() != 0:
        return "the fake node runs sshd and logs in as root: run the host tests as root (CI does)"
    for tool in (SSHD, "ssh", "ssh-keygen", "containerd"):
        if shutil.which(tool) is None:
            return f"{tool} not found: apt-get install -y openssh-server openssh-client containerd"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def step_report(stdout: str) -> dict:
    """The JSON object a step prints as its last line of stdout."""
    return json.loads(stdout.strip().splitlines()[-1])


class FakeNode:
    """One node: `with FakeNode(workdir, packages) as node: node.run_step(node.spec(), "install")`."""

    def __init__(self, workdir: Path, packages: PackageSet, address: str = "127.0.0.1", port: int = 0):
        self.workdir, self.packages = Path(workdir), packages
        self.root, self.bin, self.ssh_dir = self.workdir / "root", self.workdir / "bin", self.workdir / "ssh"
        # Several nodes can share one port on distinct loopback addresses, as a stack's nodes share `ssh.port`.
        self.address, self.port = address, port
        self.host_key = ""
        self.system_path = "/usr/bin:/bin"  # after the stand-ins on every login's PATH
        self._sshd: subprocess.Popen | None = None
        self.power: PowerSupply | None = None

    def __enter__(self) -> FakeNode:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._make_sandbox()
        self._make_bin()
        self._make_keys()
        self._start_sshd()

    def stop(self) -> None:
        if self.power is not None:
            self.power.stop()
            self.power = None
        self._stop_listener()

    def _stop_listener(self) -> None:
        if self._sshd is not None and self._sshd.poll() is None:
            self._sshd.terminate()
            self._sshd.wait(timeout=10)

    def _start_listener(self) -> None:
        if self._sshd is None or self._sshd.poll() is not None:
            self._start_sshd()

    def power_on(self, down_seconds: float = 2, driver_load_seconds: float = 0) -> PowerSupply:
        """From now on systemctl stops, starts and reboots this node for real (power.py), not just its boot id."""
        self.knob("reboot-down-seconds", str(down_seconds))
        self.knob("driver-load-seconds", str(driver_load_seconds))
        self.power = PowerSupply(self.root, self._stop_listener, self._start_listener)
        self.power.start()
        return self.power

    def without_tools(self, *names: str) -> None:
        """From the next login on, the node has no program of these NAMES on its PATH (stand-ins included)."""
        for name in names:
            (self.bin / name).unlink(missing_ok=True)
        self.system_path = path_without(self.workdir / "system-bin", names)
        self.move(self.address)

    def move(self, address: str) -> None:
        """The server comes back on another address (same disk, same host key): sshd listens there instead."""
        self._stop_listener()
        self.address = address
        self._start_sshd()

    def _make_sandbox(self) -> None:
        for directory in (STAGING, KNOBS, LOGS, "etc", "home", "tmp", "var/tmp", "proc/sys/kernel/random",
                          f"lib/modules/{DEFAULT_KNOBS['kernel']}/build"):
            (self.root / directory).mkdir(parents=True, exist_ok=True)
        (self.root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n"
                                              "HwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/bash\n")
        (self.root / "etc/group").write_text("root:x:0:\nHwHiAiUser:x:1000:\n")
        (self.root / "proc/sys/kernel/random/boot_id").write_text(str(uuid.uuid4()) + "\n")
        write_os_release(self.root, OPENEULER_2203_SP3)
        for name, value in DEFAULT_KNOBS.items():
            self.knob(name, value)

    def _make_bin(self) -> None:
        """One wrapper per stand-in; containerd is Debian's real binary unless a test asks for 2.x."""
        self.bin.mkdir(parents=True, exist_ok=True)
        python = sys.executable
        wrappers = {tool: f'exec {python} {HERE}/standins.py {tool} "$@"' for tool in STANDINS}
        wrappers["fake-ascend-installer"] = f'exec {python} {HERE}/installer.py "$@"'
        # The node's own python3 runs the scripts' Python parts, with the disk-fault knobs of faults/sitecustomize.py.
        wrappers["python3"] = f'PYTHONPATH={HERE}/faults exec {NODE_PYTHON} "$@"'
        wrappers["containerd"] = (f'if [ "$(cat "$ASCEND_ROOT/{KNOBS}/containerd-major" 2>/dev/null)" = 2 ]; then\n'
                                  f'  exec {python} {HERE}/containerd2.py "$@"\nfi\n'
                                  f'exec {shutil.which("containerd")} "$@"')
        for name, body in wrappers.items():
            path = self.bin / name
            path.write_text(f"#!/bin/sh\n{body}\n")
            path.chmod(0o755)

    def _make_keys(self) -> None:
        self.ssh_dir.mkdir(parents=True, exist_ok=True)
        for name in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.ssh_dir / name)],
                           check=True)
        shutil.copy(self.ssh_dir / "client_key.pub", self.ssh_dir / "authorized_keys")
        self.host_key = " ".join((self.ssh_dir / "host_key.pub").read_text().split()[:2])

    def _start_sshd(self) -> None:
        self.port = self.port or _free_port()
        config = self.ssh_dir / "sshd_config"
        config.write_text(sshd_config(self.port, self.address, self.ssh_dir, self.bin, self.root, self.system_path))
        (self.ssh_dir / "known_hosts").write_text(f"[{self.address}]:{self.port} {self.host_key}\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        log = (self.workdir / "sshd.log").open("w")
        # The marker lets a simulated reboot find every process of this node (power.py).
        self._sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=log,
                                      env={**os.environ, MARKER: str(self.root)})
        wait_listening(self._sshd, self.address, self.port, self.workdir / "sshd.log")

    def _ssh(self, command: str) -> list[str]:
        return ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={self.ssh_dir / 'known_hosts'}", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", "-i", str(self.ssh_dir / "client_key"),
                "-p", str(self.port), f"root@{self.address}", command]

    def run(self, command: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
        """COMMAND over SSH with the host key pinned, as pulumi-command runs it."""
        return subprocess.run(self._ssh(command), input=stdin, capture_output=True, text=True, timeout=timeout)

    def start_step(self, spec: StackSpec, step: str = "install", stdin: str = "") -> subprocess.Popen:
        """run_step without waiting: the SSH client process, its stdin already sent and closed."""
        self.stage(spec, step)
        chosen = self.steps(spec)[step]
        client = subprocess.Popen(self._ssh(chosen.create), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        client.stdin.write(stdin)
        client.stdin.close()
        return client

    def spec(self, versions: dict[str, str] = NEW, **options) -> StackSpec:
        """A parsed stack whose one node is this fake node (options: see packages.stack_config)."""
        return parse_stack(stack_config(self.packages, self.host_key, versions, **options))

    def steps(self, spec: StackSpec) -> dict[str, HostStep]:
        return host_steps(spec, spec.nodes[0])

    def upload(self, spec: StackSpec) -> None:
        """What the component's upload does: the node's package files into the staging directory."""
        for pkg in node_packages(spec, spec.nodes[0]):
            shutil.copy(self.packages.directory / pkg.file, self.root / STAGING / pkg.file)

    def stage_scripts(self) -> None:
        """What a step's staging does: each step's script into /var/tmp/ascend-npu-scripts, as <step>.sh."""
        staged = self.path(STAGED)
        staged.mkdir(parents=True, exist_ok=True)
        for step in SET_STEPS:
            shutil.copy(rendered(step, self.workdir / "rendered-scripts"), staged / f"{step}.sh")

    def stage(self, spec: StackSpec, step: str) -> None:
        """The copies a step depends on: the scripts, and for an upload stack's install the packages."""
        self.stage_scripts()
        if step == "install" and spec.packages.source is Source.UPLOAD:
            self.upload(spec)

    def run_step(self, spec: StackSpec, step: str = "install", stdin: str = "") -> subprocess.CompletedProcess:
        """Stage what the step needs, then run it exactly as host_steps() gives it."""
        self.stage(spec, step)
        return self.run(self.steps(spec)[step].create, stdin)

    def destroy(self, spec: StackSpec) -> subprocess.CompletedProcess:
        """What `pulumi destroy` does here after an `up` of SPEC: the on-destroy step's record, then its delete."""
        recorded = self.run_step(spec, "on_destroy")
        if recorded.returncode != 0:
            return recorded
        return self.run(self.steps(spec)["on_destroy"].delete)

    def knob(self, name: str, value: str | None = None) -> None:
        """Set a stand-in's knob, or remove it with None."""
        path = self.root / KNOBS / name
        if value is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(value)

    def board(self, chip: str, cards: int) -> None:
        """The node carries CARDS boards of CHIP (lspci lists each card once; npu-smi, the chosen fixture)."""
        for name, value in CHIP_KNOBS[chip].items():
            self.knob(name, value)
        self.knob("pci-npus", str(cards))

    def path(self, host_path: str) -> Path:
        """Where a host path lives in the sandbox."""
        return self.root / host_path.lstrip("/")

    def preinstall(self, versions: dict[str, str], scene: str = "containerd") -> None:
        ascend_files.preinstall(self.root, DEFAULT_KNOBS["arch"], versions, scene)

    def reboot(self) -> None:
        """The node comes back from a reboot: a new boot id."""
        (self.root / "proc/sys/kernel/random/boot_id").write_text(str(uuid.uuid4()) + "\n")

    def installer_calls(self) -> list[dict]:
        """Every installer run so far: file, kind, args, exit."""
        log = self.root / LOGS / "installers.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def installers_run(self) -> list[tuple[str, str]]:
        """Installer runs so far as (kind, "flags"), in order."""
        return [(call["kind"], " ".join(call["args"])) for call in self.installer_calls()]

    def systemctl_calls(self) -> list[str]:
        log = self.root / LOGS / "systemctl.log"
        return log.read_text().splitlines() if log.exists() else []

    def clear_logs(self) -> None:
        for log in (self.root / LOGS).iterdir():
            log.unlink()
