"""Stand-in for the Ascend Docker Runtime's run_main.sh, driven by its release's catalog entry.

What it does follows components/releases/docker-runtime.yaml: the flags and scenes the release takes, the record
line for line (`version=v6.0.0`, mode 0640), the engine config it edits and `chmod 600`s, the scene --uninstall
acts on without --install-scene (docker: on a containerd node it finds no daemon.json and exits 0, removing
nothing), the EULA question of 26.1.0 on stdin. containerd's config.toml is edited in place by text; the real
helper re-marshals the whole file (go-toml), which the host scripts never depend on.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ascend_files  # noqa: E402

from components.releases.installers import RuntimeInstaller  # noqa: E402

SCENE_CONFIG = {"docker": "/etc/docker/daemon.json", "containerd": "/etc/containerd/config.toml",
                "isula": "/etc/isulad/daemon.json"}
RUNC_OPTIONS = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]'


class Failed(Exception):
    """run_main.sh logs this and exits 1."""


def _options(installer: RuntimeInstaller, args: list[str]) -> dict:
    flags = installer.flags
    options = {"actions": []}
    for arg in args:
        name, has_value, value = arg.partition("=")
        if (name + "=" if has_value else name) not in flags:
            raise Failed(f"failed, unsupported parameters: {arg}")
        if name in ("--install", "--uninstall", "--upgrade"):
            options["actions"].append(name)
        elif name == "--install-scene":
            if value not in installer.install_scenes:
                raise Failed("failed, please check the parameter of --install-scene=<scene>")
            options["scene"] = value
        elif name == "--config-file-path":
            options["config"] = value
    return options


def _edit_daemon_json(path: Path, add: bool, reserve_default: bool) -> None:
    """The helper on daemon.json: ascend runtime (and default-runtime ascend) in or out, written 0600."""
    config = json.loads(path.read_text() or "{}") if path.exists() else {}
    runtimes = config.setdefault("runtimes", {}) if add else config.get("runtimes", {})
    if add:
        ascend = runtimes.setdefault("ascend", {})
        ascend["path"] = ascend_files.RUNTIME_PATH
        ascend.setdefault("runtimeArgs", [])
        if not reserve_default:
            config["default-runtime"] = "ascend"
    else:
        runtimes.pop("ascend", None)
        if config.get("default-runtime") == "ascend":
            del config["default-runtime"]
    path.write_text(json.dumps(config, indent=8, sort_keys=True))


def _edit_config_toml(path: Path, add: bool, adds_ascend_runtime: bool) -> None:
    """The helper on config.toml: runc pointed at the Ascend binary (6.0.x), or an ascend runtime (26.1.0)."""
    text = path.read_text()
    if adds_ascend_runtime:
        table = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ascend]'
        if add and table not in text:
            text += f'\n{table}\n  runtime_type = "io.containerd.runc.v2"\n{table[:-1]}.options]\n' \
                    f'  BinaryName = "{ascend_files.RUNTIME_PATH}"\n'
        path.write_text(text)
        return
    if RUNC_OPTIONS not in text:
        raise Failed("install failed, './ascend-docker-plugin-install-helper add ...' return non-zero "
                     "(can not find config: runtimes)")
    head, _, rest = text.partition(RUNC_OPTIONS)
    rest = re.sub(r'\n\s*BinaryName\s*=\s*"[^"]*"', "", rest, count=1)
    value = ascend_files.RUNTIME_PATH if add else ""
    path.write_text(f'{head}{RUNC_OPTIONS}\n  BinaryName = "{value}"{rest}')


def _engine_config(root: Path, options: dict, scene: str, installer: RuntimeInstaller, add: bool) -> bool:
    """Edit the scene's config (or --config-file-path); False when it does not exist and nothing was done."""
    path = root / (options.get("config") or SCENE_CONFIG[scene]).lstrip("/")
    if not path.exists():
        if not add:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        if scene == "containerd":
            default = subprocess.run(["containerd", "config", "default"], capture_output=True, text=True)
            path.write_text(default.stdout)
    if scene == "containerd":
        _edit_config_toml(path, add, installer.engine_config.containerd.adds_ascend_runtime)
    else:
        _edit_daemon_json(path, add, reserve_default=scene == "isula")
    os.chmod(path, 0o600)  # run_main.sh: chmod 600 ${DST}; uninstall moves in the helper's 0600 output
    return True


def _accept_eula(installer: RuntimeInstaller, action: str) -> None:
    prompt = installer.stdin_prompt
    if not prompt or action not in prompt.actions:
        return
    for line in sys.stdin:
        if line.strip().lower() in ("y", "n"):
            if line.strip().lower() == "n":
                raise SystemExit(0)
            return
    raise Failed("stdin ended while the EULA question was open: the real installer asks again forever")


def run(root: Path, version: str, arch: str, args: list[str]) -> int:
    """One run of the installer; its exit code."""
    installer = ascend_files.entry("dockerRuntime", version).installer
    options = _options(installer, args)
    if options.get("config") and not (root / options["config"].lstrip("/")).exists():
        raise Failed(f"failed, file '{options['config']}' does not exist.")
    scene = options.get("scene", installer.install_scene_default)
    home = ascend_files.ascend(root) / "Ascend-Docker-Runtime"
    action = next((a for a in ("--install", "--uninstall", "--upgrade") if a in options["actions"]), None)
    if action is None:
        return 0  # prints its help
    _accept_eula(installer, action)
    if action == "--uninstall":
        if not home.is_dir():
            return 0  # "uninstall skipping, the specified install path does not exist"
        if not _engine_config(root, options, scene, installer, add=False):
            return 0  # uninstall.sh: "uninstall skipping, <config> does not exist": nothing removed
        shutil.rmtree(home)
        shutil.rmtree(root / "etc/ascend-docker-runtime.d", ignore_errors=True)
        return 0
    if action == "--upgrade":
        if not home.is_dir():
            raise Failed("upgrade failed, the specified install path does not exist, stopping upgrading")
        if (home / "ascend_docker_runtime_install.info").exists():
            ascend_files.write_runtime_record(root, version, arch, scene, options.get("config", ""))
        return 0
    home.mkdir(parents=True, exist_ok=True)
    (home / "ascend-docker-runtime").write_text("#!/bin/sh\nexec runc \"$@\"\n")
    (root / "etc/ascend-docker-runtime.d").mkdir(parents=True, exist_ok=True)
    _engine_config(root, options, scene, installer, add=True)
    ascend_files.write_runtime_record(root, version, arch, scene, options.get("config", ""))
    return 0
