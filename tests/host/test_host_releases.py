"""The host against what the pinned releases really write: records, exit codes, flags, users and engine versions.

The expected texts here are typed from the releases' own sources (cited per test), not taken from the release
catalog, so a wrong catalog entry fails here even though the scripts and the fake node both read it.
"""
from __future__ import annotations

import stat

from testkit.fakenode import ascend_files
from testkit.fakenode.node import step_report
from testkit.fakenode.packages import CURRENT, NEW, OLD

SCRATCH = "/var/lib/ascend-npu/runtime-installer/engine-config"


def runtime_record(version: str, scene: str, config_file_path: str) -> str:
    """run_main.sh save_install_args() of mind-cluster v6.0.0 (component/ascend-docker-runtime/build/scripts)."""
    return (f"version=v{version}\narch=aarch64\nos=linux\npath=/usr/local/Ascend/Ascend-Docker-Runtime\n"
            f"build=Ascend-docker-runtime_{version}-aarch64\na500=n\na500a2=n\na200=n\na200isoc=n\na200ia2=n\n"
            f"install-scene={scene}\nconfig-file-path={config_file_path}\n")


# A driver's version.info as the 24.1.rc2.2 installer leaves it (public host dump, see npu-driver.yaml), the
# firmware's, the toolkit's (keys as in vllm-project/vllm-ascend#4621) and the kernels' (opp version.info: build
# number + release).
REAL_RECORDS = {
    "usr/local/Ascend/driver/version.info":
        "Version=24.1.rc2.2\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\nlog_version=1.0\n"
        "prof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\nInnerversion=V100R001C18SPC001B233\n"
        "compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]\n"
        "compatible_version_fw=[7.0.0,7.2.99]\npackage_version=24.1.rc2.2\n",
    "usr/local/Ascend/firmware/version.info":
        "Version=7.3.0.1.231\nfirmware_version=1.0\npackage_version=24.1.rc2\n"
        "compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]\n",
    "usr/local/Ascend/ascend-toolkit/8.0.RC3/aarch64-linux/ascend_toolkit_install.info":
        "package_name=Ascend-cann-toolkit\nversion=8.0.RC3\ninnerversion=V100R001C19SPC001B124\n"
        "compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]\narch=aarch64\nos=linux\n"
        "path=/usr/local/Ascend/ascend-toolkit/8.0.RC3/aarch64-linux\n",
    "usr/local/Ascend/ascend-toolkit/8.0.RC3/opp_kernel/version.info":
        "Version=7.5.0.1.129\nversion_dir=8.0.RC3\ntimestamp=20241020_101010000\n",
}


def test_the_fake_runtime_installer_writes_the_record_run_main_sh_writes(node):
    assert node.run_step(node.spec(), "install").returncode == 0
    record = node.path("/usr/local/Ascend/Ascend-Docker-Runtime/ascend_docker_runtime_install.info")
    assert record.read_text() == runtime_record(NEW["dockerRuntime"], "containerd", SCRATCH)
    assert stat.S_IMODE(record.stat().st_mode) == 0o640


def test_a_host_laid_out_as_the_real_installers_leave_it_reruns_with_nothing_to_install(node):
    spec = node.spec()
    assert node.run_step(spec, "install").returncode == 0
    for path, text in REAL_RECORDS.items():
        (node.root / path).write_text(text)
    node.path("/usr/local/Ascend/Ascend-Docker-Runtime/ascend_docker_runtime_install.info").write_text(
        runtime_record(NEW["dockerRuntime"], "containerd", ""))  # installed by hand, as Huawei's guide does it
    node.reboot()
    node.clear_logs()
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert node.installer_calls() == [] and node.systemctl_calls() == []
    assert again.stdout.count(", skipped") == 5
    assert "[install] driver: already 24.1.rc2.2, skipped" in again.stdout  # as its version file says
    verify = node.run_step(spec, "verify")
    assert verify.returncode == 0, verify.stderr
    report = step_report(verify.stdout)
    assert report["healthy"] is True and report["rebootRequired"] is False
    assert report["versions"]["dockerRuntime"] == "v6.0.0" and report["versions"]["driver"] == "24.1.rc2.2"


def test_a_runtime_record_without_the_leading_v_is_not_the_wanted_release(node):
    node.preinstall(NEW)
    node.path("/usr/local/Ascend/Ascend-Docker-Runtime/ascend_docker_runtime_install.info").write_text(
        "version=6.0.0\narch=aarch64\n")
    result = node.run_step(node.spec(), "verify")
    assert result.returncode != 0
    assert "dockerRuntime is 6.0.0, the stack wants v6.0.0" in result.stderr


def test_a_driver_that_asks_for_a_reboot_is_recorded_and_verify_reports_it(node):
    node.preinstall({**NEW, "driver": OLD["driver"]})
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert node.installers_run() == [("driver", "--upgrade --quiet")]
    assert node.installer_calls()[0]["exit"] == 2
    assert "reboot required" in result.stdout
    assert step_report(node.run_step(node.spec(), "verify").stdout)["rebootRequired"] is True


def test_a_driver_that_resets_the_npus_itself_needs_no_reboot(node):
    node.preinstall({**NEW, "driver": OLD["driver"]})
    node.knob("driver-hot-reset", "ok")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert node.installer_calls()[0]["exit"] == 0 and "reboot required" not in result.stdout
    assert step_report(node.run_step(node.spec(), "verify").stdout)["rebootRequired"] is False


def test_runtime_26_1_0_gets_its_eula_answer_and_records_its_release(node):
    spec = node.spec({**NEW, "dockerRuntime": "26.1.0"})
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    assert ascend_files.installed(node.root, "dockerRuntime", "aarch64") == "v26.1.0"


def test_the_runtime_uninstall_without_a_scene_removes_nothing_on_a_containerd_node(node):
    """uninstall.sh of v6.0.0: the docker scene by default; no daemon.json, so "uninstall skipping", exit 0."""
    node.preinstall(NEW)
    node.path("/etc/containerd").mkdir(parents=True)
    node.path("/etc/containerd/config.toml").write_text("version = 2\n")
    package = f"/var/cache/ascend-npu/packages/Ascend-docker-runtime_{NEW['dockerRuntime']}_linux-aarch64.run"
    node.path(package).write_bytes(
        (node.packages.directory / f"Ascend-docker-runtime_{NEW['dockerRuntime']}_linux-aarch64.run").read_bytes())
    result = node.run(f"bash {node.path(package)} --uninstall")
    assert result.returncode == 0
    assert ascend_files.installed(node.root, "dockerRuntime", "aarch64") == "v" + NEW["dockerRuntime"]


def test_the_driver_group_and_membership_are_checked_before_any_installer(node):
    passwd = node.path("/etc/passwd").read_text()
    node.path("/etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    node.path("/etc/group").write_text("root:x:0:\n")
    result = node.run_step(node.spec(), "install")
    assert "user HwHiAiUser does not exist and the driver installer needs it: groupadd HwHiAiUser && useradd -g " \
        "HwHiAiUser -d /home/HwHiAiUser -m HwHiAiUser -s /bin/bash" in result.stderr
    node.path("/etc/passwd").write_text(passwd)
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0 and node.installer_calls() == []
    assert "group HwHiAiUser does not exist and the driver installer needs it: groupadd HwHiAiUser && usermod -a -G " \
        "HwHiAiUser HwHiAiUser" in result.stderr
    node.path("/etc/group").write_text("root:x:0:\nHwHiAiUser:x:1001:\n")
    result = node.run_step(node.spec(), "install")
    assert "user HwHiAiUser is not in group HwHiAiUser, which the driver installer needs: usermod -a -G" \
        " HwHiAiUser HwHiAiUser" in result.stderr
    node.path("/etc/group").write_text("root:x:0:\nHwHiAiUser:x:1001:HwHiAiUser\n")
    assert node.run_step(node.spec(), "install").returncode == 0


def test_dkms_and_gcc_stand_in_for_missing_kernel_headers(node):
    (node.root / "lib/modules").rename(node.root / "lib/modules-gone")
    for tool in ("dkms", "gcc"):
        (node.bin / tool).write_text("#!/bin/sh\nexit 0\n")
        (node.bin / tool).chmod(0o755)
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert node.installers_run()[0] == ("driver", "--full --install-for-all --quiet")


def test_docker_nodes_need_cri_dockerd_0_4_0_for_the_runtime_class(node):
    node.knob("cri-dockerd-version", "0.3.16")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode != 0 and node.installer_calls() == []
    assert "cri-dockerd 0.3.16 is older than 0.4.0, which pods of the ascend RuntimeClass need" in result.stderr
    # With ascend as Docker's default runtime no pod names a runtime handler: any cri-dockerd will do.
    assert node.run_step(node.spec(runtime="docker", default_runtime=True), "install").returncode == 0


def test_a_firmware_outside_the_drivers_range_is_refused_naming_both(node):
    node.preinstall(NEW)
    (node.root / "usr/local/Ascend/firmware/version.info").write_text(
        "Version=7.3.0.1.231\nfirmware_version=1.0\npackage_version=24.1.rc2\n"
        "compatible_version_drv=[23.0.0,23.0.0.]\n")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0
    assert "the installed driver 24.1.rc2 and firmware 7.3.0.1.231 do not go together" in result.stderr
    assert "driver 24.1.rc2 takes firmware [7.0.0,7.2.99]" in result.stderr
    verify = node.run_step(node.spec(), "verify")
    assert verify.returncode != 0 and step_report(verify.stdout)["healthy"] is False


def run_runtime_installer(node, *flags: str):
    """The runtime's .run file run by hand on the node, as Huawei's guide has it."""
    name = f"Ascend-docker-runtime_{NEW['dockerRuntime']}_linux-aarch64.run"
    return node.run(" ".join(["bash", str(node.packages.directory / name), *flags]))


def test_the_runtime_installer_makes_ascend_dockers_default_and_chmods_daemon_json_600(node):
    """run_main.sh (v6.0.0) `chmod 600 ${DST}`; docker_process.go sets default-runtime and indents by 8."""
    daemon_json = node.path("/etc/docker/daemon.json")
    daemon_json.parent.mkdir(parents=True)
    daemon_json.write_text('{"log-driver": "json-file"}\n')
    daemon_json.chmod(0o644)
    assert run_runtime_installer(node, "--install", "--install-scene=docker").returncode == 0
    assert stat.S_IMODE(daemon_json.stat().st_mode) == 0o600
    assert daemon_json.read_text() == (
        '{\n        "default-runtime": "ascend",\n        "log-driver": "json-file",\n        "runtimes": {\n'
        '                "ascend": {\n                        "path": '
        '"/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime",\n'
        '                        "runtimeArgs": []\n                }\n        }\n}')


def test_the_runtime_installer_6_0_0_cannot_edit_a_containerd_2_config_itself(node):
    """containerd_process.go (v6.0.0) looks for runc under io.containerd.grpc.v1.cri: absent in a version 3 file."""
    config = node.path("/etc/containerd/config.toml")
    config.parent.mkdir(parents=True)
    config.write_text('version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]\n'
                      "  SystemdCgroup = true\n")
    result = run_runtime_installer(node, "--install", "--install-scene=containerd")
    assert result.returncode == 1 and "can not find config: runtimes" in result.stderr
    # The install step hands it a scratch config instead, so the node installs all the same.
    node.knob("containerd-major", "2")
    assert node.run_step(node.spec(), "install").returncode == 0


def test_a_node_moves_from_the_6_0_0_set_to_the_26_1_0_set_in_one_install(node):
    """HDK 24.1.rc2 -> 25.5.0, CANN 8.0.RC3 -> 9.1.0 (its ops package and the cann/ layout of 8.5 on), runtime 6.0.0 ->
    26.1.0; then verify reads each record, and npu-smi names the new driver."""
    node.preinstall(NEW)
    spec = node.spec(CURRENT)
    assert spec.versions.mind_cluster == "26.1.0"
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    assert [kind for kind, _ in node.installers_run()] == ["firmware", "driver", "toolkit", "kernels", "dockerRuntime"]
    assert node.path("/usr/local/Ascend/cann/aarch64-linux/ascend_ops_install.info").read_text().startswith(
        "package_name=Ascend-cann-ops\nversion=9.1.0\n")
    verify = node.run_step(spec, "verify")
    assert verify.returncode == 0, verify.stderr
    assert step_report(verify.stdout)["versions"] == {"driver": "25.5.0", "firmware": "7.8.0.5.216", "cann": "9.1.0",
                                                      "dockerRuntime": "v26.1.0"}
    header = node.run("npu-smi info").stdout.splitlines()[1]
    assert header.startswith("| npu-smi 25.5.0 ") and "Version: 25.5.0 " in header
