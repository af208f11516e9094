"""Stand-in for the Ascend `.run` installers: their flags, exit codes and version files (ASCEND-FACTS 2 and 3).

Each fake `.run` file execs this with its own name, kind, version and arch, then the flags it was given.
Knobs: `installer-sleep` (seconds per run), `fail-<kind>` (stop half way: files copied, no version file),
`hold-<kind>` (seconds to wait after its files and config edits are written, before exiting).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ascend_files  # noqa: E402
import sandbox  # noqa: E402

HDK_FLAGS = ({"--full", "--upgrade", "--quiet", "--nox11", "--check", "--uninstall", "--install-for-all"},
             ("--install-username=", "--install-usergroup="))
CANN_FLAGS = ({"--install", "--upgrade", "--uninstall", "--install-for-all", "--quiet"}, ("--install-path=",))
RUNTIME_FLAGS = ({"--install", "--upgrade", "--uninstall"},
                 ("--install-path=", "--install-scene=", "--injection-mode=", "--config-file-path="))
FLAGS = {"driver": HDK_FLAGS, "firmware": HDK_FLAGS, "toolkit": CANN_FLAGS, "kernels": CANN_FLAGS,
         "dockerRuntime": RUNTIME_FLAGS}
ACTIONS = ("--full", "--install", "--upgrade", "--uninstall", "--check")
SCENES = ("docker", "containerd", "crio", "isula")


class Refused(Exception):
    """The installer stops with this message and exit code 1."""


def check_flags(kind: str, args: list[str]) -> str:
    """The one action the flags ask for, or Refused the way the real installers refuse."""
    allowed, prefixes = FLAGS[kind]
    for arg in args:
        if arg not in allowed and not arg.startswith(prefixes):
            raise Refused(f"unknown option {arg}")
    actions = [a for a in args if a in ACTIONS]
    if len(actions) != 1:
        raise Refused(f"give exactly one of {', '.join(a for a in ACTIONS if a in allowed)}")
    action = actions[0]
    if "--quiet" in args and action not in ("--full", "--install", "--upgrade"):
        raise Refused(f"--quiet cannot be used with {action}")
    user_flags = [a for a in args if a == "--install-for-all" or a.startswith(HDK_FLAGS[1])]
    if kind in ("driver", "firmware") and action == "--upgrade" and user_flags:
        raise Refused(f"--upgrade cannot be combined with {user_flags[0]}")
    scenes = [a.split("=", 1)[1] for a in args if a.startswith("--install-scene=")]
    if any(scene not in SCENES for scene in scenes):
        raise Refused(f"--install-scene must be one of {'|'.join(SCENES)}")
    return action


def check_prerequisites(root: Path, kind: str, version: str, arch: str, args: list[str]) -> None:
    """What the real installers need before they copy anything."""
    if kind == "driver":
        release = sandbox.knob("kernel", "")
        if not (root / f"lib/modules/{release}/build").is_dir():
            raise Refused(f"kernel headers for {release} not found, cannot build the driver modules")
        passwd = root / "etc/passwd"
        has_user = passwd.exists() and any(line.startswith("HwHiAiUser:") for line in passwd.read_text().splitlines())
        if not has_user and not any(a.startswith("--install-username=") for a in args):
            raise Refused("user HwHiAiUser does not exist")
    if kind == "firmware" and not ascend_files.installed(root, "driver", arch):
        raise Refused("driver not installed, install the driver first")
    if kind == "kernels" and (ascend_files.installed(root, "toolkit", arch) or "").lower() != version.lower():
        raise Refused(f"CANN toolkit {version} is not installed, install it first")


def install(root: Path, kind: str, version: str, arch: str, args: list[str]) -> int:
    """Run the action the flags ask for; the exit code the real installer would give."""
    action = check_flags(kind, args)
    if os.geteuid() != 0:
        raise Refused("only root can install")
    present = ascend_files.installed(root, kind, arch)
    config = next((a.split("=", 1)[1] for a in args if a.startswith("--config-file-path=")), None)
    scene = next((a.split("=", 1)[1] for a in args if a.startswith("--install-scene=")), "docker")
    if config is not None and not Path(config).exists():
        raise Refused(f"failed, file '{config}' does not exist.")
    live = root / "etc/docker/daemon.json"
    if kind == "dockerRuntime" and config is None and action != "--upgrade" and live.is_symlink():
        raise Refused("/etc/docker/daemon.json is soft link")  # run_main.sh check_path, without --config-file-path
    if action == "--check":
        return 0
    if action == "--uninstall":
        if not present:
            raise Refused(f"{kind} is not installed")
        ascend_files.remove(root, kind, arch)
        if kind == "dockerRuntime" and scene == "docker":
            ascend_files.docker_helper(root, add=False, path=config)
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
    ascend_files.write(root, kind, version, arch, scene)
    if kind == "dockerRuntime" and scene == "docker":
        ascend_files.docker_helper(root, add=True, path=config)
    # ascend-deployer treats firmware exit code 2 as success; the stand-in gives it on upgrades to exercise that.
    return 2 if kind == "firmware" and action == "--upgrade" else 0


def main(argv: list[str]) -> int:
    file, kind, version, arch, *args = argv
    time.sleep(float(sandbox.knob("installer-sleep", "0")))
    try:
        code = install(sandbox.root(), kind, version, arch, args)
        time.sleep(float(sandbox.knob(f"hold-{kind}", "0")))
        print(f"[INFO] {file}: {' '.join(args)} done")
    except Refused as refused:
        code = 1
        print(f"[ERROR] {file}: {refused}", file=sys.stderr)
    sandbox.log("installers.jsonl", {"file": file, "kind": kind, "args": args, "exit": code})
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
