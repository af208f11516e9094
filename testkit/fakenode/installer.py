"""Stand-in for the Ascend `.run` installers: flags, exit codes and version files from the release catalog.

Each fake `.run` file execs this with its own name, kind, version and arch, then the flags it was given. Driver and
firmware take the flags and give the exit codes of components/releases/npu-driver.yaml and npu-firmware.yaml (2:
installed, reboot needed), CANN those of cann.yaml; the Ascend Docker Runtime is runtime_installer.py.
While the simulated kubelet lists a process holding the NPU device nodes (`fake/npu-holders`, one Pod a line:
tests/e2e and testkit/simulated_devices.py write it), the driver refuses to upgrade or uninstall as Huawei's does.
Knobs: `installer-sleep` (seconds per run), `fail-<kind>` (stop half way: files copied, no version file),
`driver-hot-reset` (`ok`: the driver resets the NPUs itself and exits 0 instead of asking for a reboot),
`long-line` (bytes: each run first prints one line that long, of two-byte UTF-8 characters among ASCII).
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ascend_files  # noqa: E402
import runtime_installer  # noqa: E402
import sandbox  # noqa: E402

from components.releases.catalog import component_releases  # noqa: E402
from components.releases.installers import Installer  # noqa: E402

ACTIONS = ("--full", "--install", "--upgrade", "--uninstall", "--check")


def installer_facts(kind: str, version: str) -> Installer:
    """The catalog's installer facts for this package (CANN's are the same for every catalogued release)."""
    if kind in ("toolkit", "kernels"):
        return next(iter(component_releases("cann").values())).installer
    return ascend_files.entry(kind, version).installer


class Refused(Exception):
    """The installer stops with this message and exit code 1."""


HOLDERS = "fake/npu-holders"
# github.com/hicann/driver ef377e9 scripts/package/custom/driver/common/scripts/driver_install.sh L416-422 (and
# uninstall.sh L166-172): printed, then `exitLog 1`, before anything is copied or removed. The real check (its
# check_boot_status, L377-414) runs on a physical server without --force; the fake node is one, given no --force.
OCCUPIED = ("[ERROR]The davinci nodes are occupied by some processes, please stop processes and install or uninstall "
            "again, details in : /var/log/ascend_seclog/ascend_install.log")
FORCE_HINT = ("[INFO]If you want to install or uninstall the driver forcibly, add the force parameter. For details, "
              "see [--help].")


class Occupied(Refused):
    """The driver's refusal while its device nodes are held: its own two lines, exit 1."""


def holders(root: Path) -> list[str]:
    """What holds the NPU device nodes now, as the simulated kubelet last wrote it."""
    path = root / HOLDERS
    return [line for line in path.read_text().splitlines() if line] if path.exists() else []


def check_flags(kind: str, version: str, args: list[str]) -> str:
    """The one action the flags ask for, or Refused the way the real installers refuse."""
    allowed = installer_facts(kind, version).flags
    for arg in args:
        name, has_value, _ = arg.partition("=")
        if (name + "=" if has_value else name) not in allowed:
            raise Refused(f"unknown option {arg}")
    actions = [a for a in args if a in ACTIONS]
    if len(actions) != 1:
        raise Refused(f"give exactly one of {', '.join(a for a in ACTIONS if a in allowed)}")
    action = actions[0]
    if "--quiet" in args and action not in ("--full", "--install", "--upgrade"):
        raise Refused(f"--quiet cannot be used with {action}")
    user_flags = [a for a in args if a == "--install-for-all" or a.startswith(("--install-username=",
                                                                                 "--install-usergroup="))]
    if kind in ("driver", "firmware") and action == "--upgrade" and user_flags:
        raise Refused(f"--upgrade cannot be combined with {user_flags[0]}")
    return action


def _lines(path: Path) -> list[list[str]]:
    return [line.split(":") for line in path.read_text().splitlines()] if path.exists() else []


def check_driver_user(root: Path) -> None:
    """HwHiAiUser: the user, the group, and the user in the group."""
    users = {f[0]: f for f in _lines(root / "etc/passwd")}
    groups = {f[0]: f for f in _lines(root / "etc/group")}
    if "HwHiAiUser" not in users:
        raise Refused("user HwHiAiUser does not exist")
    if "HwHiAiUser" not in groups:
        raise Refused("group HwHiAiUser does not exist")
    group = groups["HwHiAiUser"]
    if users["HwHiAiUser"][3] != group[2] and "HwHiAiUser" not in group[3].split(","):
        raise Refused("user HwHiAiUser is not in group HwHiAiUser")


def check_prerequisites(root: Path, kind: str, version: str, arch: str, args: list[str]) -> None:
    """What the real installers need before they copy anything."""
    if kind == "driver":
        release = sandbox.knob("kernel", "")
        dkms = shutil.which("dkms") and shutil.which("gcc")
        if not (root / f"lib/modules/{release}/build").is_dir() and not dkms:
            raise Refused(f"kernel headers for {release} not found, cannot build the driver modules")
        if not any(a.startswith("--install-username=") for a in args):
            check_driver_user(root)
    if kind == "firmware" and not ascend_files.installed(root, "driver", arch):
        raise Refused("driver not installed, install the driver first")
    if kind == "kernels" and (ascend_files.installed(root, "toolkit", arch) or "").lower() != version.lower():
        raise Refused(f"CANN toolkit {version} is not installed, install it first")


def install(root: Path, kind: str, version: str, arch: str, args: list[str]) -> int:
    """Run the action the flags ask for; the exit code the real installer would give."""
    if kind == "dockerRuntime":
        try:
            return runtime_installer.run(root, version, arch, args)
        except runtime_installer.Failed as failed:
            raise Refused(str(failed)) from None
    action = check_flags(kind, version, args)
    if os.geteuid() != 0:
        raise Refused("only root can install")
    present = ascend_files.installed(root, kind, arch)
    if action == "--check":
        return 0
    if kind == "driver" and present and action in ("--upgrade", "--uninstall") and holders(root):
        raise Occupied(holders(root))
    if action == "--uninstall":
        if not present:
            raise Refused(f"{kind} is not installed")
        ascend_files.remove(root, kind, arch)
        return 0
    if action in ("--full", "--install") and present:
        raise Refused(f"{kind} {present} is already installed, use --upgrade")
    if action == "--upgrade" and not present:
        raise Refused(f"no {kind} to upgrade, install it first")
    check_prerequisites(root, kind, version, arch, args)
    if sandbox.knob(f"fail-{kind}"):
        ascend_files.write_partial(root, kind)
        raise Refused(f"copying {kind} files failed half way")
    if action == "--upgrade":
        ascend_files.remove(root, kind, arch)
    ascend_files.write(root, kind, version, arch)
    # Exit 2: installed, reboot needed. The driver gives it when it cannot hot-reset the NPUs; the firmware
    # stand-in gives it on upgrades.
    reboot = getattr(installer_facts(kind, version), "reboot_exit_code", 0)
    if kind == "driver" and sandbox.knob("driver-hot-reset") != "ok":
        return reboot
    return reboot if kind == "firmware" and action == "--upgrade" else 0


def print_long_line(size: int) -> None:
    """One line of SIZE bytes (whole characters only) on stdout, as some installers print a progress bar."""
    if size:
        line = ("npu-\u00e9-" * size).encode()[:size].decode(errors="ignore")
        sys.stdout.buffer.write(line.encode() + b"\n")
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    file, kind, version, arch, *args = argv
    # When each run started, wall clock: the end-to-end run reads the order of nodes across waves from it.
    sandbox.log("installer-starts.log", f"{time.time():.6f} {kind}")
    time.sleep(float(sandbox.knob("installer-sleep", "0")))
    print_long_line(int(sandbox.knob("long-line", "0")))
    try:
        code = install(sandbox.root(), kind, version, arch, args)
        time.sleep(float(sandbox.knob(f"hold-{kind}", "0")))
        print(f"[INFO] {file}: {' '.join(args)} done")
    except Occupied as occupied:
        code = 1
        print(f"[Driver] [{time.strftime('%Y-%m-%d %H:%M:%S')}] {OCCUPIED}\n"
              f"[Driver] [{time.strftime('%Y-%m-%d %H:%M:%S')}] {FORCE_HINT}", file=sys.stderr)
        sandbox.log("device-holders.log", {"refused": kind, "holders": occupied.args[0]})
    except Refused as refused:
        code = 1
        print(f"[ERROR] {file}: {refused}", file=sys.stderr)
    sandbox.log("installers.jsonl", {"file": file, "kind": kind, "args": args, "exit": code})
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
