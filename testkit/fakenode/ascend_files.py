"""What the Ascend installers leave on a host, written into a sandbox root from the release catalog.

Driver, firmware and runtime records come from components/releases/*.yaml, so the fake writes what the pinned
release writes (the runtime's `version=v6.0.0`, the driver's `compatible_version_fw`), not a belief of its own.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from components.releases.catalog import component_releases, release_entry  # noqa: E402
from components.releases.installers import DockerRuntime, NpuDriver, NpuFirmware  # noqa: E402

RUNTIME_HOME = "/usr/local/Ascend/Ascend-Docker-Runtime"
# The character devices the driver's modules create (MindCluster ascend-device-plugin pkg/common/constants.go,
# v6.0.0 and v26.1.0: /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc), beside one /dev/davinciN per chip.
DRIVER_DEVICES = ("davinci_manager", "devmm_svm", "hisi_hdc")
NPU_SMI_FIXTURES = Path(__file__).parent / "npu_smi"
RUNTIME_PATH = f"{RUNTIME_HOME}/ascend-docker-runtime"
COMPONENT = {"driver": "npu-driver", "firmware": "npu-firmware", "dockerRuntime": "docker-runtime"}


def entry(kind: str, version: str) -> DockerRuntime | NpuDriver | NpuFirmware:
    """The catalog entry of a release; a driver file version with an extra patch (25.0.rc1.1) takes its release's."""
    releases = component_releases(COMPONENT[kind])
    for release in releases:
        if version.lower() == release.lower() or version.lower().startswith(release.lower() + "."):
            return releases[release]
    return release_entry(COMPONENT[kind], version)  # raises, listing the known releases


def runtime_record(version: str, arch: str, scene: str, config_file_path: str = "") -> str:
    """The runtime's record file, line for line as its release's run_main.sh writes it."""
    record = entry("dockerRuntime", version).installer.record
    values = {"version": version, "arch": arch, "path": RUNTIME_HOME, "scene": scene,
              "config_file_path": config_file_path}
    return "".join(line.format(**values) + "\n" for line in record.lines)


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
        record = entry(kind, version).record
        _write(home / "driver/version.info", [
            ("Version", version), ("Innerversion", record.innerversion),
            ("compatible_version", record.compatible_version),
            ("compatible_version_fw", record.compatible_version_fw), ("package_version", version)])
        _install_info(root, Driver_Install_Path_Param="/usr/local/Ascend", Driver_Install_Status="complete",
                      UserName="HwHiAiUser", UserGroup="HwHiAiUser")
        write_devices(root)
        write_hccn_tool(home)
    elif kind == "firmware":
        record = entry(kind, version).record
        _write(home / "firmware/version.info", [
            ("Version", version), ("firmware_version", "1.0"), ("package_version", record.package_version),
            ("compatible_version_drv", record.compatible_version_drv)])
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
    elif kind == "kernels" and cann_home(root, version).name == "cann":
        # From 8.5 the operator package (Ascend-cann-<chip>-ops) records itself beside the toolkit (CANN 8.5.0 release
        # notes; cann/<arch>-linux/ascend_ops_install.info in the CANN repositories' install checks).
        _write(cann_home(root, version) / f"{arch}-linux/ascend_ops_install.info", [
            ("package_name", "Ascend-cann-ops"), ("version", version), ("arch", arch), ("os", "linux")])
    elif kind == "kernels":
        # Kernels record an internal build number as Version and the CANN release as version_dir.
        _write(cann_home(root, version) / "opp_kernel/version.info", [
            ("Version", version.split(".")[0] + ".0.T60.0.B101"), ("version_dir", version),
            ("timestamp", "20241020_101010000")])
    elif kind == "dockerRuntime":
        base = home / "Ascend-Docker-Runtime"
        base.mkdir(parents=True, exist_ok=True)
        (base / "ascend-docker-runtime").write_text("#!/bin/sh\nexec runc \"$@\"\n")
        write_runtime_record(root, version, arch, scene)


def chips(text: str) -> list[dict]:
    """The chips of an `npu-smi info` text, read by the host steps' own parser (components/host/scripts)."""
    path = Path(__file__).resolve().parents[2] / "components/host/scripts/npu_smi.py"
    spec = importlib.util.spec_from_file_location("fake_npu_smi", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.chips(text)


def board_chips(root: Path) -> int:
    """How many chips the node's npu-smi fixture lists (the board a test chose with its knob)."""
    fixture = (Path(root) / "fake/knobs/npu-smi-fixture")
    name = fixture.read_text().strip() if fixture.exists() else "910b"
    return len(chips((NPU_SMI_FIXTURES / f"{name}.txt").read_text()))


def write_devices(root: Path) -> None:
    """Simulated: the devices the loaded driver shows (regular files standing in for character devices)."""
    dev = Path(root) / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    for name in [f"davinci{i}" for i in range(board_chips(root))] + list(DRIVER_DEVICES):
        (dev / name).touch()


def write_hccn_tool(home: Path) -> None:
    """The driver's network tool (driver/tools/hccn_tool): the stand-in, run by the node's own python3."""
    tool = home / "driver/tools/hccn_tool"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(f'#!/bin/sh\nexec python3 {Path(__file__).resolve().parent / "hccn_tool.py"} "$@"\n')
    tool.chmod(0o755)


def remove_devices(root: Path) -> None:
    for path in (Path(root) / "dev").glob("davinci*"):
        path.unlink()
    for name in DRIVER_DEVICES[1:]:
        (Path(root) / "dev" / name).unlink(missing_ok=True)


def write_runtime_record(root: Path, version: str, arch: str, scene: str, config_file_path: str = "") -> None:
    """The runtime's record, with the mode its installer gives it."""
    path = ascend(root) / "Ascend-Docker-Runtime/ascend_docker_runtime_install.info"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(runtime_record(version, arch, scene, config_file_path))
    os.chmod(path, int(entry("dockerRuntime", version).installer.record.mode, 8))


def installed(root: Path, kind: str, arch: str) -> str | None:
    """The version of KIND the sandbox has, read the way the installers themselves would."""
    home = ascend(root)
    if kind in ("driver", "firmware"):
        return _read(home / kind / "version.info", "Version")
    if kind == "dockerRuntime":
        return _read(home / "Ascend-Docker-Runtime/ascend_docker_runtime_install.info", "version")
    if kind == "kernels":
        return (_read(home / "ascend-toolkit/latest/opp_kernel/version.info", "version_dir")
                or _read(home / f"cann/{arch}-linux/ascend_ops_install.info", "version"))
    for base in (home / "ascend-toolkit/latest", home / "cann"):
        found = _read(base / f"{arch}-linux/ascend_toolkit_install.info", "version")
        if found:
            return found
    return None


def remove(root: Path, kind: str, arch: str) -> None:
    """What an uninstall takes away."""
    home = ascend(root)
    if kind in ("driver", "firmware"):
        shutil.rmtree(home / kind, ignore_errors=True)
        if kind == "driver":
            remove_devices(root)
    elif kind == "dockerRuntime":
        shutil.rmtree(home / "Ascend-Docker-Runtime", ignore_errors=True)
    elif kind == "kernels":
        shutil.rmtree(home / "ascend-toolkit/latest/opp_kernel", ignore_errors=True)
        (home / f"cann/{arch}-linux/ascend_ops_install.info").unlink(missing_ok=True)
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


def preinstall(root: Path, arch: str, versions: dict[str, str], scene: str = "containerd") -> None:
    """A host that already has these versions (keys: driver, firmware, cann, dockerRuntime)."""
    for kind, key in (("driver", "driver"), ("firmware", "firmware"), ("toolkit", "cann"), ("kernels", "cann"),
                      ("dockerRuntime", "dockerRuntime")):
        if key in versions:
            write(root, kind, versions[key], arch, scene)
