"""The installer entries of the release catalog (runtime, driver, firmware, CANN): records, matrix, stack model."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from components.config import parse_stack
from components.config.compatibility import load_matrix
from components.config.problems import SpecError
from components.host.catalog_facts import runtime_record_version
from components.host.script_set import SCRIPTS
from components.releases.catalog import INSTALLER_COMPONENTS, component_releases, installer_entry, known_releases
from components.releases.installers import StdinPrompt
from testkit.fakenode.packages import NEW, build_packages, stack_config

ROOT = Path(__file__).resolve().parents[1]
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


@pytest.mark.parametrize("release, record", [("6.0.0", "v6.0.0"), ("6.0.RC3", "v6.0.RC3"), ("26.1.0", "v26.1.0")])
def test_the_runtime_record_carries_a_leading_v(release, record):
    """run_main.sh at each tag: `echo -e "version=v${PACKAGE_VERSION}"`, PACKAGE_VERSION the package name's."""
    assert runtime_record_version(release) == record


def test_only_runtime_26_1_0_asks_for_the_eula_on_stdin():
    prompts = {release: entry.installer.stdin_prompt for release, entry in component_releases("docker-runtime").items()}
    eula = StdinPrompt(answer="y", actions=["--install", "--upgrade"])
    assert prompts == {"6.0.0": None, "6.0.RC3": None, "26.1.0": eula}


def test_every_installer_kind_reads_its_flags_from_its_catalog_file():
    for kind, component in INSTALLER_COMPONENTS.items():
        for release in known_releases(component):
            installer = installer_entry(kind, release)
            assert installer.flags and installer.exit_codes[0]
    assert installer_entry("driver", "24.1.rc3").fresh == ["--full", "--install-for-all", "--quiet"]
    assert installer_entry("firmware", "7.7.0.1.231").reboot_exit_code == 2
    assert installer_entry("kernels", "8.0.0").kernels_record.endswith("(version_dir=)")


def test_a_runtime_release_outside_the_catalog_is_refused_with_the_known_ones(tmp_path):
    raw = stack_config(build_packages(tmp_path), HOST_KEY, NEW)
    raw["versions"]["dockerRuntime"] = "6.0.RC2"
    with pytest.raises(SpecError) as refused:
        parse_stack(raw)
    text = str(refused.value)
    assert "versions.dockerRuntime" in text and "6.0.RC2" in text
    assert ", ".join(known_releases("docker-runtime")) in text


def compatibility(tmp_path: Path, driver: str, firmware: str) -> str:
    """The node's verdict (firmware_compat.py, run as compat.sh runs it) on the catalog records of DRIVER and
    FIRMWARE: empty when they go together."""
    drv = component_releases("npu-driver")[driver].record
    fw = component_releases("npu-firmware")[firmware].record
    home = tmp_path / driver / firmware
    (home / "driver").mkdir(parents=True)
    (home / "firmware").mkdir()
    (home / "driver/version.info").write_text(f"Version={driver}\n"
                                              f"compatible_version_fw={drv.compatible_version_fw}\n")
    (home / "firmware/version.info").write_text(f"Version={firmware}\n"
                                                f"compatible_version_drv={fw.compatible_version_drv}\n")
    program = (f'py() {{ python3 "{SCRIPTS}/$1.py" "${{@:2}}"; }}; ASCEND_HOME={home}; . {SCRIPTS / "compat.sh"}; '
               'check_firmware_compatibility; echo "$COMPAT_PROBLEM"')
    return subprocess.run(["bash", "-c", program], capture_output=True, text=True).stdout.strip()


def catalogued_pairs() -> list[tuple[str, str]]:
    """The matrix's driver -> firmware pairs whose two records the catalog carries."""
    drivers, firmwares = component_releases("npu-driver"), component_releases("npu-firmware")
    return sorted((d, f) for d, f in load_matrix().driver_firmware if d in drivers and f in firmwares)


def test_every_matrix_pair_with_catalogued_records_goes_together_by_its_records(tmp_path):
    pairs = catalogued_pairs()
    assert ("24.1.rc2", "7.3.0.1.231") in pairs and len(pairs) == 8
    assert {pair: compatibility(tmp_path, *pair) for pair in pairs} == {pair: "" for pair in pairs}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_pinned_pair_of_each_stack_is_catalogued_and_goes_together(tmp_path, stack):
    versions = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]["ascend-npu:versions"]
    pair = (str(versions["driver"]).lower(), str(versions["firmware"]))
    assert pair in catalogued_pairs()
    assert compatibility(tmp_path, *pair) == ""


def test_records_that_do_not_go_together_are_named_with_both_versions(tmp_path):
    # Driver 23.0.7 takes firmware 7.0.0-7.1.99; firmware 7.5.0.1.129 takes drivers 23.0.0, 24.0 and 24.1 only.
    verdict = compatibility(tmp_path, "23.0.7", "7.5.0.1.129")
    assert "the installed driver 23.0.7 and firmware 7.5.0.1.129 do not go together" in verdict
    assert "driver 23.0.7 takes firmware [7.0.0,7.1.99]" in verdict


def test_the_firmware_range_alone_decides_when_the_firmware_lists_no_such_driver(tmp_path):
    # Driver 24.1.rc1 takes firmware 7.0.0-7.2.99, which holds 7.1.0.11.220 although that firmware lists 23.0 only
    # (the pair MindCluster's own fault-diagnosis guide shows on one host).
    assert compatibility(tmp_path, "24.1.rc1", "7.1.0.11.220") == ""
