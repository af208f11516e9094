"""Fake `.run` packages named the way Huawei names them, and stack configs that install them on the fake node."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from components.config.compatibility import load_sets
from components.config.packages import Kind, parse_file_name, versions_match

OLD = {"firmware": "7.1.0.6.220", "driver": "24.1.rc1", "cann": "8.0.RC2", "dockerRuntime": "6.0.RC3"}
NEW = {"firmware": "7.3.0.1.231", "driver": "24.1.rc2", "cann": "8.0.RC3", "dockerRuntime": "6.0.0"}
# MindCluster 26.1.0's set as prod pins it: HDK 25.5.0, CANN 9.1.0 (its operator packages named -ops from 8.5.0).
CURRENT = {"firmware": "7.8.0.5.216", "driver": "25.5.0", "cann": "9.1.0", "dockerRuntime": "26.1.0"}
# (kind, chip, arch, file): two documented stacks on aarch64 for 910B and for 310P, which takes the same driver and
# firmware pair from CANN 8.0.RC1 (Huawei's CANN install guides; pairs and sources in policies/compatibility.yaml).
FILES = (
    ("driver", "910B", "aarch64", "Ascend-hdk-910b-npu-driver_24.1.rc1_linux-aarch64.run"),
    ("driver", "910B", "aarch64", "Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run"),
    ("firmware", "910B", None, "Ascend-hdk-910b-npu-firmware_7.1.0.6.220.run"),
    ("firmware", "910B", None, "Ascend-hdk-910b-npu-firmware_7.3.0.1.231.run"),
    ("toolkit", None, "aarch64", "Ascend-cann-toolkit_8.0.RC2_linux-aarch64.run"),
    ("toolkit", None, "aarch64", "Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run"),
    ("kernels", "910B", "aarch64", "Ascend-cann-kernels-910b_8.0.RC2_linux.run"),
    ("kernels", "910B", "aarch64", "Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run"),
    ("driver", "310P", "aarch64", "Ascend-hdk-310p-npu-driver_24.1.rc1_linux-aarch64.run"),
    ("driver", "310P", "aarch64", "Ascend-hdk-310p-npu-driver_24.1.rc2_linux-aarch64.run"),
    ("firmware", "310P", None, "Ascend-hdk-310p-npu-firmware_7.1.0.6.220.run"),
    ("firmware", "310P", None, "Ascend-hdk-310p-npu-firmware_7.3.0.1.231.run"),
    ("kernels", "310P", "aarch64", "Ascend-cann-kernels-310p_8.0.RC2_linux.run"),
    ("kernels", "310P", "aarch64", "Ascend-cann-kernels-310p_8.0.RC3_linux-aarch64.run"),
    ("driver", "910B", "aarch64", "Ascend-hdk-910b-npu-driver_25.5.0_linux-aarch64.run"),
    ("firmware", "910B", None, "Ascend-hdk-910b-npu-firmware_7.8.0.5.216.run"),
    ("toolkit", None, "aarch64", "Ascend-cann-toolkit_9.1.0_linux-aarch64.run"),
    ("kernels", "910B", "aarch64", "Ascend-cann-910b-ops_9.1.0_linux-aarch64.run"),
    ("driver", "310P", "aarch64", "Ascend-hdk-310p-npu-driver_25.5.0_linux-aarch64.run"),
    ("firmware", "310P", None, "Ascend-hdk-310p-npu-firmware_7.8.0.5.216.run"),
    ("kernels", "310P", "aarch64", "Ascend-cann-310p-ops_9.1.0_linux-aarch64.run"),
    ("driver", "910C", "aarch64", "Atlas-A3-hdk-npu-driver_25.5.0_linux-aarch64.run"),
    ("firmware", "910C", None, "Atlas-A3-hdk-npu-firmware_7.8.0.5.216.run"),
    ("kernels", "910C", "aarch64", "Ascend-cann-A3-ops_9.1.0_linux-aarch64.run"),
    ("dockerRuntime", None, "aarch64", "Ascend-docker-runtime_6.0.RC3_linux-aarch64.run"),
    ("dockerRuntime", None, "aarch64", "Ascend-docker-runtime_6.0.0_linux-aarch64.run"),
    ("dockerRuntime", None, "aarch64", "Ascend-docker-runtime_26.1.0_linux-aarch64.run"),
)
VERSION_KEY = {"driver": "driver", "firmware": "firmware", "toolkit": "cann", "kernels": "cann",
               "dockerRuntime": "dockerRuntime"}


@dataclass(frozen=True)
class PackageSet:
    """The built files and their real SHA-256 sums."""

    directory: Path
    sha256: dict[str, str]

    def files_for(self, versions: dict[str, str]) -> list[dict]:
        """packages.files entries for the files of these versions."""
        entries = []
        for kind, chip, arch, file in FILES:
            found = parse_file_name(Kind(kind), file)
            if versions_match(versions[VERSION_KEY[kind]], found["version"]):
                entry = {"kind": kind, "file": file, "sha256": self.sha256[file]}
                entry.update({k: v for k, v in (("chip", chip), ("arch", arch)) if v})
                entries.append(entry)
        return entries


def run_file_text(kind: str, file: str, arch: str | None) -> str:
    version = parse_file_name(Kind(kind), file)["version"]
    return ("#!/bin/bash\n"
            f"# Test stand-in named like the Huawei package {file}; not a Huawei package.\n"
            "# The fake node's fake-ascend-installer (testkit/fakenode/installer.py) does the work.\n"
            f'exec fake-ascend-installer "{file}" {kind} {version} {arch or "any"} "$@"\n')


def build_packages(directory: Path) -> PackageSet:
    """Write every fake package into DIRECTORY."""
    directory.mkdir(parents=True, exist_ok=True)
    sums = {}
    for kind, _, arch, file in FILES:
        data = run_file_text(kind, file, arch).encode()
        (directory / file).write_bytes(data)
        sums[file] = hashlib.sha256(data).hexdigest()
    return PackageSet(directory, sums)


OVERRIDE_REASON = "the host tests pin installers of releases no MindCluster set pairs"


def in_release_set(versions: dict[str, str]) -> dict:
    """The versions under the MindCluster release whose runtime they pin (6.0.0 for one of no set), and, where the
    host tests pin what that release's tables leave out, the override that names it (the host steps are what these
    tests judge; the sets have tests of their own)."""
    sets = load_sets()
    chosen = sets.of_component("dockerRuntime", versions["dockerRuntime"]) or sets.get("6.0.0")
    out = {"mindCluster": chosen.release, **versions}
    own = chosen.component("dockerRuntime") == versions["dockerRuntime"]
    if own and chosen.version_problem(versions["driver"], versions["cann"]) is None:
        return out
    out["compatibilityOverride"] = {"firmware": versions["firmware"], "driver": versions["driver"],
                                    "cann": versions["cann"], "reason": OVERRIDE_REASON,
                                    **({} if own else {"dockerRuntime": versions["dockerRuntime"]})}
    return out


def stack_config(packages: PackageSet, host_key: str, versions: dict[str, str] = NEW, *, runtime: str = "containerd",
                 default_runtime: bool = False, source: str = "upload", mirror_url: str | None = None,
                 allow_reboot: bool = False, uninstall: bool = False, npu_count: int = 8, user: str = "root",
                 rollout: dict | None = None, npu_network: dict | None = None, chip: str = "910B") -> dict:
    """A raw stack config (keys without `ascend-npu:`) with one aarch64 node (910B unless CHIP): the fake node."""
    package_source = {"source": source, "files": packages.files_for(versions)}
    package_source.update({"directory": str(packages.directory)} if source == "upload" else {"mirrorUrl": mirror_url})
    return {
        "cluster": {"name": "fake", "containerRuntime": runtime, "ascendDefaultRuntime": default_runtime},
        "ssh": {"user": user, "useAgent": True},
        "nodes": [{"name": "fake-npu-01", "address": "127.0.0.1", "hostKey": host_key, "chip": chip,
                   "arch": "aarch64", "npuCount": npu_count, **({"npuNetwork": npu_network} if npu_network else {})}],
        "versions": in_release_set(versions),
        "packages": package_source,
        "rollout": {"allowReboot": allow_reboot, "uninstallOnDestroy": uninstall, **(rollout or {})},
        # The catalog has no CANN image for these versions: the stack names its validation images per chip.
        "validation": {"images": {chip: {"repository": "registry.example.com/ascend/cann",
                                         "tag": f"{versions['cann']}-{chip.lower()}-ubuntu22.04-py3.10"}
                                  for chip in ("910B", "910C", "310P")}},
    }
