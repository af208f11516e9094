"""The install step over real SSH on the fake node: order, idempotence, upgrades, refusals and recovery."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from components.config import parse_stack
from components.host import mirror_login_stdin, node_packages
from components.runner.reboot_wait import rebooted_from
from testkit.fakenode import ascend_files
from testkit.fakenode.mirror import serve_directory
from testkit.fakenode.node import step_report
from testkit.fakenode.packages import NEW, OLD, stack_config

# The runtime installer edits a scratch engine config, never the live one.
SCRATCH = "--config-file-path=/var/lib/ascend-npu/runtime-installer/engine-config"
# ascend-deployer's fresh-install flags: driver and CANN for all users, firmware without (npu-driver.yaml, cann.yaml).
FRESH_ORDER = [("driver", "--full --install-for-all --quiet"), ("firmware", "--full --quiet"),
               ("toolkit", "--install --install-for-all --quiet"), ("kernels", "--install --install-for-all --quiet"),
               ("dockerRuntime", f"--install --install-scene=containerd {SCRATCH}")]
# What the runtime's record says once NEW is in: its installer writes the version with a leading v.
NEW_RUNTIME_RECORD = "v" + NEW["dockerRuntime"]


def installed(node, kind: str) -> str | None:
    return ascend_files.installed(node.root, kind, "aarch64")


def test_fresh_host_gets_driver_before_firmware_then_verifies(node):
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert node.installers_run() == FRESH_ORDER
    assert [installed(node, k) for k in ("driver", "firmware", "toolkit", "kernels", "dockerRuntime")] == \
        [NEW["driver"], NEW["firmware"], NEW["cann"], NEW["cann"], NEW_RUNTIME_RECORD]
    assert node.installer_calls()[0]["exit"] == 2  # the driver's "installed, reboot needed" is accepted
    assert "its installer asks for a reboot (exit 2)" in result.stdout and "reboot required" in result.stdout
    assert node.systemctl_calls() == ["restart containerd"]
    verify = node.run_step(node.spec(), "verify")
    assert verify.returncode == 0, verify.stderr
    report = step_report(verify.stdout)
    assert report["healthy"] is True and report["rebootRequired"] is True
    assert report["versions"] == {"driver": NEW["driver"], "firmware": NEW["firmware"], "cann": NEW["cann"],
                                  "dockerRuntime": NEW_RUNTIME_RECORD}


def test_second_run_installs_nothing_and_restarts_nothing(node):
    spec = node.spec()
    assert node.run_step(spec, "install").returncode == 0
    node.clear_logs()
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert node.installer_calls() == [] and node.systemctl_calls() == []
    assert again.stdout.count(", skipped") == 5
    assert "containerd not restarted" in again.stdout


def test_upgrade_puts_firmware_before_driver_on_a_host_with_a_driver(node):
    node.preinstall(OLD)
    result = node.run_step(node.spec(NEW), "install")
    assert result.returncode == 0, result.stderr
    # Upgrading the toolkit replaces its version directory, kernels included: they install afresh.
    assert node.installers_run() == [
        ("firmware", "--upgrade --quiet"), ("driver", "--upgrade --quiet"), ("toolkit", "--upgrade --quiet"),
        ("kernels", "--install --install-for-all --quiet"),
        ("dockerRuntime", f"--upgrade --install-scene=containerd {SCRATCH}")]
    assert [call["exit"] for call in node.installer_calls()[:2]] == [2, 2]  # "installed, reboot needed" accepted
    assert re.search(rf"driver {re.escape(NEW['driver'])} installed with --upgrade --quiet in \d+ s "
                     rf"\(was {re.escape(OLD['driver'])}\)", result.stdout)


def test_driver_upgrade_is_refused_while_npus_are_in_use(node):
    node.preinstall(OLD)
    node.knob("npu-smi-fixture", "910b-wide")  # lists a python process on NPU 5
    result = node.run_step(node.spec(NEW), "install")
    assert result.returncode != 0
    assert "1 process(es) are using the NPUs" in result.stderr and "no installer ran" in result.stderr
    assert node.installer_calls() == []


def test_a_runtime_setting_change_reruns_install_without_any_installer(node):
    assert node.run_step(node.spec(), "install").returncode == 0
    node.clear_logs()
    result = node.run_step(node.spec(default_runtime=True), "install")
    assert result.returncode == 0, result.stderr
    assert node.installer_calls() == [] and node.systemctl_calls() == ["restart containerd"]
    assert 'default_runtime_name = "ascend"' in node.path("/etc/containerd/config.toml").read_text()


def test_wrong_arch_is_refused_before_any_installer(node):
    node.knob("arch", "x86_64")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0
    assert "this host is x86_64 but its packages are built for aarch64" in result.stderr
    assert "no installer ran" in result.stderr
    assert node.installer_calls() == []


def test_every_preflight_problem_is_reported_at_once(node):
    (node.root / "lib/modules").rename(node.root / "lib/modules-gone")
    node.knob("pci-npus", "0")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0
    assert "kernel headers for the running kernel 5.10.0-182.0.0.95.oe2203sp3.aarch64 are missing" in result.stderr
    assert "no Ascend NPU on PCI" in result.stderr  # the Huawei NIC on the same vendor id does not count
    assert "preflight found 2 problem(s)" in result.stderr
    assert node.installer_calls() == []


def test_too_little_disk_for_the_packages_is_refused_before_any_installer(node):
    node.knob("free-kb", "0")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0
    assert "[install] / has 0 MiB free, installing needs about 0 MiB; free some space" in result.stderr
    assert "no installer ran" in result.stderr
    assert node.installer_calls() == []


def test_missing_headers_do_not_matter_once_the_driver_is_installed(node):
    node.preinstall({"driver": NEW["driver"], "firmware": NEW["firmware"]})
    (node.root / "lib/modules").rename(node.root / "lib/modules-gone")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert [kind for kind, _ in node.installers_run()] == ["toolkit", "kernels", "dockerRuntime"]


def test_checksum_mismatch_is_refused_before_any_installer(node):
    spec = node.spec()
    node.upload(spec)
    staged = node.path("/var/cache/ascend-npu/packages/Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run")
    staged.write_text(staged.read_text() + "# tampered\n")
    node.stage_scripts()
    result = node.run(node.steps(spec)["install"].create)  # no fresh upload: the damaged file stays
    assert result.returncode != 0
    expected = node.packages.sha256["Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run"]
    assert "Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run has sha256" in result.stderr
    assert f"packages.files says {expected}" in result.stderr
    assert node.installer_calls() == []


@pytest.mark.parametrize("failing, done_before", [("driver", 0), ("toolkit", 2)])
def test_an_installer_failing_half_way_is_completed_by_the_next_run(node, failing, done_before):
    spec = node.spec()
    node.knob(f"fail-{failing}", "1")
    failed = node.run_step(spec, "install")
    assert failed.returncode != 0
    flags = dict(FRESH_ORDER)[failing]
    assert f"{failing} {spec.versions.driver if failing == 'driver' else spec.versions.cann}: " in failed.stderr
    assert f"{flags} failed (exit 1)" in failed.stderr and "finished packages are skipped" in failed.stderr
    assert node.installers_run() == FRESH_ORDER[:done_before + 1] and installed(node, failing) is None
    node.knob(f"fail-{failing}")
    node.clear_logs()
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert node.installers_run() == FRESH_ORDER[done_before:]
    assert installed(node, "kernels") == NEW["cann"]
    if failing == "driver":  # the half-copied driver directory is reported, then installed over
        assert "note: /usr/local/Ascend/driver exists without version.info" in again.stdout


def test_mirror_packages_are_fetched_once_and_checked(node):
    with serve_directory(node.packages.directory) as (url, served):
        spec = node.spec(source="mirror", mirror_url=url + "/")
        first = node.run_step(spec, "install")
        assert first.returncode == 0, first.stderr
        assert sorted(served) == sorted(f"/{pkg.file}" for pkg in node_packages(spec, spec.nodes[0]))
        assert node.path("/var/cache/ascend-npu/packages").exists() and len(served) == 5
        node.clear_logs()
        assert node.run_step(spec, "install").returncode == 0 and len(served) == 5


class ProcessWatch:
    """Reads every process's argument list and environment while a step runs, looking for a text."""

    def __init__(self, text: str):
        self.text, self.seen, self.scans = text.encode(), [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _watch(self):
        while not self._stop.is_set():
            self.scans += 1
            for proc in Path("/proc").glob("[0-9]*"):
                for part in ("cmdline", "environ"):
                    try:
                        if self.text in (proc / part).read_bytes():
                            self.seen.append((proc.name, part))
                    except OSError:
                        pass


# ids, not the logins, name the cases: pytest puts the case name in its own environment, which the watch reads.
@pytest.mark.parametrize("login", ["deploy:Mirror-pass-7f3a", "de\"p\\loy:Mirror-pass-7f3a'$(id)\"\\"],
                         ids=["plain", "quotes-and-backslashes"])
def test_mirror_login_reaches_curl_on_stdin_never_in_a_process_list(node, login):
    with serve_directory(node.packages.directory, login=login, node_root=node.root) as (url, served):
        spec = parse_stack(stack_config(node.packages, node.host_key, source="mirror", mirror_url=url),
                           mirror_credentials=login, mirror_credentials_is_secret=True)
        step = node.steps(spec)["install"]
        node.stage_scripts()
        refused = node.run(step.create)
        assert refused.returncode != 0 and "401" in refused.stderr and node.installer_calls() == []
        served.clear()
        with ProcessWatch("Mirror-pass-7f3a") as watch:
            result = node.run(step.create, mirror_login_stdin(login))
    assert result.returncode == 0, result.stderr
    assert len(served) == 5 and node.installers_run() == FRESH_ORDER
    assert "Mirror-pass-7f3a" not in step.create + result.stdout + result.stderr
    assert watch.scans > 0 and watch.seen == []


def test_a_bad_mirror_download_is_refused_and_dropped(node, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for entry in node.packages.files_for(NEW):
        (mirror / entry["file"]).write_bytes((node.packages.directory / entry["file"]).read_bytes())
    (mirror / "Ascend-docker-runtime_6.0.0_linux-aarch64.run").write_text("#!/bin/bash\necho not it\n")
    with serve_directory(mirror) as (url, _):
        result = node.run_step(node.spec(source="mirror", mirror_url=url), "install")
    assert result.returncode != 0 and "Ascend-docker-runtime_6.0.0_linux-aarch64.run has sha256" in result.stderr
    assert not node.path("/var/cache/ascend-npu/packages/Ascend-docker-runtime_6.0.0_linux-aarch64.run").exists()
    assert node.installer_calls() == []


def test_reboot_is_issued_at_the_end_only_when_allowed(node):
    boot = node.path("/proc/sys/kernel/random/boot_id").read_text().strip()
    result = node.run_step(node.spec(allow_reboot=True), "install")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].endswith(
        f"rebooting in 1 s from boot {boot} (SSH closed until the node is back)")
    # The reboot wait reads the boot the node leaves from this line.
    assert rebooted_from(result.stdout) == boot
    deadline = time.monotonic() + 10
    while "reboot" not in node.systemctl_calls() and time.monotonic() < deadline:
        time.sleep(0.1)
    # The SSH listener closes before the step ends, so verify dials (and retries) only once the node is back.
    assert node.systemctl_calls() == ["restart containerd", "stop ssh.socket", "stop ssh.service", "stop sshd.service",
                                      "reboot"]
    node.clear_logs()
    after_reboot = node.run_step(node.spec(allow_reboot=True), "install")
    assert "reboot" not in after_reboot.stdout and node.systemctl_calls() == []


def test_destroy_uninstalls_with_the_documented_flags(node):
    spec = node.spec(uninstall=True)
    original = "version = 2\n"
    node.path("/etc/containerd").mkdir(parents=True)
    node.path("/etc/containerd/config.toml").write_text(original)
    assert node.run_step(spec, "install").returncode == 0
    node.clear_logs()
    result = node.destroy(spec)
    assert result.returncode == 0, result.stderr
    # Without --install-scene the runtime's --uninstall would act on the docker scene and remove nothing here.
    assert node.installers_run() == [("dockerRuntime", f"--uninstall --install-scene=containerd {SCRATCH}")] + \
        [(kind, "--uninstall") for kind in ("kernels", "toolkit", "firmware", "driver")]
    assert all(installed(node, kind) is None for kind in ("driver", "firmware", "toolkit", "kernels", "dockerRuntime"))
    assert node.path("/etc/containerd/config.toml").read_text() == original
    assert node.systemctl_calls() == ["restart containerd"]


def test_the_driver_installer_refuses_while_a_pod_holds_its_device_nodes_and_goes_on_once_it_left(node):
    """Simulated: the kubelet's NPU agents holding /dev/davinci_manager (testkit/fakenode/installer.py HOLDERS)."""
    node.preinstall(OLD)
    held = node.root / "fake/npu-holders"
    held.write_text("ascend-system/ascend-device-plugin-910b-x1\n")
    refused = node.run_step(node.spec(NEW), "install")
    assert refused.returncode != 0
    assert "The davinci nodes are occupied by some processes, please stop processes and install or uninstall again" \
        in refused.stdout + refused.stderr
    assert installed(node, "driver") == OLD["driver"]
    assert [c["exit"] for c in node.installer_calls() if c["kind"] == "driver"] == [1]
    held.write_text("")
    node.clear_logs()
    again = node.run_step(node.spec(NEW), "install")
    assert again.returncode == 0, again.stderr
    assert installed(node, "driver") == NEW["driver"]
