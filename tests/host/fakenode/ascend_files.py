"""What the Ascend installers leave on a host (ASCEND-FACTS.md section 3), written into a sandbox root."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

RUNTIME_PATH = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"
DRIVER_COMPATIBLE = "[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]"


def ascend(root: Path) -> Path:
    return Path(root) / "usr/local/Ascend"


def _write(path: Path, pairs: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in pairs))


def _read(path: Path, key: str) -> str | None:
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        name, _, value = line.partition("=")
        if name.lower() == key.lower():
            return value
    return None


def _install_info(root: Path, **updates: str) -> None:
    """/etc/ascend_install.info: key=value lines the driver and firmware installers keep up to date."""
    path = Path(root) / "etc/ascend_install.info"
    pairs = dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}
    pairs.update(updates)
    _write(path, sorted(pairs.items()))


def cann_home(root: Path, version: str) -> Path:
    """CANN installs under ascend-toolkit/<version> (with a `latest` link) before 8.5, under cann/ from 8.5."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return ascend(root) / ("cann" if (major, minor) >= (8, 5) else f"ascend-toolkit/{version}")


def write(root: Path, kind: str, version: str, arch: str, scene: str = "containerd") -> None:
    """The files a successful install of KIND leaves behind."""
    root = Path(root)
    home = ascend(root)
    if kind == "driver":
        _write(home / "driver/version.info", [
            ("Version", version), ("Innerversion", "V100R001C19SPC001B124"), ("compatible_version", DRIVER_COMPATIBLE),
            ("compatible_version_fw", "[7.0.0,7.5.99]"), ("package_version", version)])
        _install_info(root, Driver_Install_Path_Param="/usr/local/Ascend", Driver_Install_Status="complete",
                      UserName="HwHiAiUser", UserGroup="HwHiAiUser")
    elif kind == "firmware":
        _write(home / "firmware/version.info", [
            ("Version", version), ("firmware_version", "1.0"), ("package_version", "24.1.rc2"),
            ("compatible_version_drv", "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]")])
        _install_info(root, Firmware_Install_Path_Param="/usr/local/Ascend", Firmware_Install_Status="complete")
    elif kind == "toolkit":
        base = cann_home(root, version)
        _write(base / f"{arch}-linux/ascend_toolkit_install.info", [
            ("package_name", "Ascend-cann-toolkit"), ("version", version), ("innerversion", "V100R001C20SPC001B251"),
            ("arch", arch), ("os", "linux"), ("path", f"/{base.relative_to(root)}/{arch}-linux")])
        if base.parent.name == "ascend-toolkit":
            latest = base.parent / "latest"
            latest.unlink(missing_ok=True)
            latest.symlink_to(version)
    elif kind == "kernels":
        # Kernels record an internal build number as Version and the CANN release as version_dir.
        _write(cann_home(root, version) / "opp_kernel/version.info", [
            ("Version", version.split(".")[0] + ".0.T60.0.B101"), ("version_dir", version),
            ("timestamp", "20241020_101010000")])
    elif kind == "dockerRuntime":
        base = home / "Ascend-Docker-Runtime"
        _write(base / "ascend_docker_runtime_install.info", [
            ("version", version), ("arch", arch), ("path", "/usr/local/Ascend/Ascend-Docker-Runtime"),
            ("install-scene", scene)])
        (base / "ascend-docker-runtime").write_text("#!/bin/sh\nexec runc \"$@\"\n")


def installed(root: Path, kind: str, arch: str) -> str | None:
    """The version of KIND the sandbox has, read the way the installers themselves would."""
    home = ascend(root)
    if kind in ("driver", "firmware"):
        return _read(home / kind / "version.info", "Version")
    if kind == "dockerRuntime":
        return _read(home / "Ascend-Docker-Runtime/ascend_docker_runtime_install.info", "version")
    for base in (home / "ascend-toolkit/latest", home / "cann"):
        found = (_read(base / f"{arch}-linux/ascend_toolkit_install.info", "version") if kind == "toolkit"
                 else _read(base / "opp_kernel/version.info", "version_dir"))
        if found:
            return found
    return None


def remove(root: Path, kind: str, arch: str) -> None:
    """What an uninstall takes away."""
    home = ascend(root)
    if kind in ("driver", "firmware"):
        shutil.rmtree(home / kind, ignore_errors=True)
    elif kind == "dockerRuntime":
        shutil.rmtree(home / "Ascend-Docker-Runtime", ignore_errors=True)
    elif kind == "kernels":
        for base in (home / "ascend-toolkit/latest", home / "cann"):
            shutil.rmtree(base / "opp_kernel", ignore_errors=True)
    else:
        for base in (home / "ascend-toolkit", home / "cann"):
            shutil.rmtree(base, ignore_errors=True)


def write_partial(root: Path, kind: str) -> None:
    """Half an install: files copied, no version file yet."""
    part = ascend(root) / {"driver": "driver/kernel", "firmware": "firmware/image", "toolkit": "ascend-toolkit/.part",
                           "kernels": "ascend-toolkit/latest/opp_kernel/.part",
                           "dockerRuntime": "Ascend-Docker-Runtime/.part"}[kind]
    part.mkdir(parents=True, exist_ok=True)
    (part / "copied-before-the-failure").write_text("partial\n")


def docker_helper(root: Path, add: bool, path: str | None = None) -> None:
    """Like the runtime's install helper: add ascend (as the default runtime) to daemon.json, or take it out; the
    result replaces the file (`mv`) and gets mode 600 (run_main.sh of mind-cluster v6.0.0). PATH: the
    --config-file-path given, else /etc/docker/daemon.json."""
    path = Path(path) if path else Path(root) / "etc/docker/daemon.json"
    if not path.exists():
        return
    config = json.loads(path.read_text() or "{}")
    runtimes = config.setdefault("runtimes", {})
    if add:
        runtimes["ascend"] = {"path": RUNTIME_PATH, "runtimeArgs": []}
        config["default-runtime"] = "ascend"
    else:
        runtimes.pop("ascend", None)
        config.pop("default-runtime", None)
    written = path.with_name(f"{path.name}.{os.getppid()}")
    written.write_text(json.dumps(config, indent=4))
    written.replace(path)
    path.chmod(0o600)


def preinstall(root: Path, arch: str, versions: dict[str, str], scene: str = "containerd") -> None:
    """A host that already has these versions (keys: driver, firmware, cann, dockerRuntime)."""
    for kind, key in (("driver", "driver"), ("firmware", "firmware"), ("toolkit", "cann"), ("kernels", "cann"),
                      ("dockerRuntime", "dockerRuntime")):
        if key in versions:
            write(root, kind, versions[key], arch, scene)
