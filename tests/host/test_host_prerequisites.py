"""Prerequisites checked on the fake node before anything is touched: python3, passwordless sudo, the OS lists, curl
for a mirror, and the driver installer's tools; each missing one is one line naming the fix."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from components.config import parse_stack
from components.host import mirror_login_stdin
from testkit.fakenode.mirror import serve_directory
from testkit.fakenode.node import NODE_PYTHON
from testkit.fakenode.packages import stack_config
from testkit.fakenode.sandbox import DEBIAN_12, UBUNTU_1804_5, write_os_release

# The project's own bookkeeping, which a refused run may write: its run log, its run lock, the copy of the step's
# script it runs (run_step.sh).
BOOKKEEPING = ("var/log/ascend-npu/run.log", "var/lib/ascend-npu/run.lock", "var/lib/ascend-npu/run.lock.holder",
               "var/lib/ascend-npu/scripts")
PYTHON_FIX = ("install python3 3.6 or newer with apt-get install python3 (Debian, Ubuntu) or dnf install python3 "
              "(openEuler, CentOS; yum on CentOS 7), then rerun; nothing was changed")
SUDO_LINE = ("[{step}] ssh.user ascend-deploy needs passwordless sudo on this node (sudo -n {probe}: sudo: a password "
             "is required): add the line \"ascend-deploy ALL=(root) NOPASSWD: ALL\" with visudo -f "
             "/etc/sudoers.d/ascend-npu, then rerun; nothing on the node was changed")
OS_ADVICE = ("those lists are incomplete, so the install goes on: check Huawei's compatibility checker for driver "
             "24.1.rc2 and CANN 8.0.RC3, or use an OS image on the list")
LISTS_910B = ("the OS lists read for 910B (Huawei Quick Installation Guide 24.0.RC1, Atlas 800T A2; "
              "components/releases/os-support.yaml)")


def host_files(root: Path) -> dict[str, tuple]:
    """Every path of the sandbox but the fake's knobs and logs: its kind, mode and content hash."""
    found = {}
    for path in root.rglob("*"):
        name = str(path.relative_to(root))
        if name.startswith("fake/") or name == "fake":
            continue
        status = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        found[name] = (status.st_mode, digest, os.readlink(path) if path.is_symlink() else "")
    return found


def changed(before: dict, after: dict) -> set[str]:
    """The paths added, removed or changed between two host_files(), the project's bookkeeping aside."""
    names = {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}
    return {n for n in names if not any(n == b or n.startswith(b + "/") or b.startswith(n + "/") for b in BOOKKEEPING)}


def refused(node, spec, stdin: str = "", step: str = "install"):
    """Run STEP after staging, and return its result and what it changed on the host."""
    node.stage(spec, step)
    before = host_files(node.root)
    result = node.run(node.steps(spec)[step].create, stdin)
    return result, changed(before, host_files(node.root))


def test_a_node_without_python3_is_refused_first_with_the_package_to_install(node):
    node.without_tools("python3")
    result, touched = refused(node, node.spec())
    assert result.returncode != 0 and "command not found" not in result.stderr
    assert result.stderr.splitlines() == [f"[install] python3 not found, and this step runs its Python parts with it: "
                                          f"{PYTHON_FIX}"]
    assert node.installer_calls() == [] and touched == set()


def pyenv_python(version: str) -> str:
    """pyenv's interpreter of VERSION (e.g. 3.6) on this machine; the test is skipped without one."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(versions.glob(f"{version}.*/bin/python{version}"))
    if not found:
        pytest.skip(f"no Python {version} here (pyenv install {version})")
    return str(found[0])


def node_python3(node, interpreter: str) -> None:
    """The node's python3 is INTERPRETER (with the wrapper's disk-fault hooks, as before)."""
    wrapper = node.bin / "python3"
    wrapper.write_text(wrapper.read_text().replace(NODE_PYTHON, interpreter))


def test_a_python3_older_than_the_floor_is_refused_naming_both_versions(node):
    """Python 2.7 plays the old python3: the only interpreter older than 3.6 here (a real one, saying its version)."""
    node_python3(node, pyenv_python("2.7"))
    result, touched = refused(node, node.spec())
    assert result.returncode != 0
    assert result.stderr.splitlines() == [f"[install] python3 is 2.7, older than the 3.6 this step's Python parts "
                                          f"need: {PYTHON_FIX}"]
    assert node.installer_calls() == [] and touched == set()


def test_the_whole_install_runs_on_the_oldest_python3_it_takes_without_a_locale(node):
    """Python 3.6 (CentOS 7's, Ubuntu 18.04's) without LANG, as over SSH: a non-ASCII config.toml is merged."""
    node_python3(node, pyenv_python("3.6"))
    assert node.run("python3 -c 'import sys; print(sys.version_info[:2])'; echo ${LANG-unset}").stdout.split("\n")[:2] \
        == ["(3, 6)", "unset"]
    config = node.path("/etc/containerd/config.toml")
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("version = 2\n# 昇腾 NPU 节点 (managed by hand)\n")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert len(node.installer_calls()) == 5 and "# 昇腾 NPU 节点 (managed by hand)" in config.read_text()
    assert "runtimes.ascend" in config.read_text()


def sudo_spec(node, **options):
    return node.spec(user="ascend-deploy", **options)


@pytest.mark.parametrize("step", ["install", "verify", "on_destroy"])
def test_a_sudo_that_asks_for_a_password_stops_the_command_before_the_node_is_touched(node, step):
    node.knob("sudo-password", "1")
    result, touched = refused(node, sudo_spec(node), step=step)
    label = "on-destroy" if step == "on_destroy" else step
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.splitlines() == [SUDO_LINE.format(step=label, probe="env true")]
    assert node.installer_calls() == [] and touched == set()
    assert not node.path("/var/log/ascend-npu/run.log").exists()  # no script of the step ran at all


def test_destroy_checks_sudo_for_bash_its_own_program(node):
    node.knob("sudo-password", "1")
    before = host_files(node.root)
    result = node.run(node.steps(sudo_spec(node))["on_destroy"].delete)
    assert result.returncode != 0
    assert result.stderr.splitlines() == [SUDO_LINE.format(step="on-destroy", probe="bash -c true")]
    assert changed(before, host_files(node.root)) == set()


def test_passwordless_sudo_says_nothing_and_the_mirror_login_still_arrives_on_stdin(node):
    login = "deploy:Mirror-pass-7f3a"
    with serve_directory(node.packages.directory, login=login, node_root=node.root) as (url, served):
        raw = stack_config(node.packages, node.host_key, source="mirror", mirror_url=url, user="ascend-deploy")
        spec = parse_stack(raw, mirror_credentials=login, mirror_credentials_is_secret=True)
        assert node.steps(spec)["install"].create.startswith("bash -c ")  # the sudo check comes first
        result = node.run_step(spec, "install", mirror_login_stdin(login))
    assert result.returncode == 0, result.stderr
    assert len(served) == 5 and len(node.installer_calls()) == 5
    assert "sudo" not in result.stdout + result.stderr and "WARNING" not in result.stdout + result.stderr


def test_a_mirror_node_without_curl_is_refused_before_any_download(node):
    node.without_tools("curl")
    with serve_directory(node.packages.directory) as (url, served):
        result, touched = refused(node, node.spec(source="mirror", mirror_url=url))
    assert result.returncode != 0 and served == [] and "curl exit" not in result.stderr
    assert "[install] curl not found, and packages.source is mirror: the node fetches its packages from " \
           "packages.mirrorUrl with curl; install it with apt-get install curl (Debian, Ubuntu) or dnf install curl " \
           "(openEuler, CentOS), then rerun" in result.stderr.splitlines()
    assert "[install] preflight found 1 problem(s); no installer ran" in result.stderr.splitlines()
    assert node.installer_calls() == [] and touched == set()


def test_an_upload_node_needs_no_curl(node):
    node.without_tools("curl")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert "curl" not in result.stdout + result.stderr


DRIVER_TOOL_LINES = {
    "ifconfig": "[install] ifconfig not found, and the driver installer needs it (ascend-deployer installs net-tools "
                "for the driver): install net-tools with apt-get install net-tools (Debian, Ubuntu) or dnf install "
                "net-tools (openEuler, CentOS), then rerun",
    "modinfo": "[install] modinfo not found, and the driver installer needs it (the driver's install script reads its "
               "kernel modules' vermagic with it): install kmod with apt-get install kmod (Debian, Ubuntu) or dnf "
               "install kmod (openEuler, CentOS), then rerun",
}


def test_the_driver_installers_tools_are_each_named_with_their_package(node):
    node.without_tools("ifconfig", "modinfo")
    result, touched = refused(node, node.spec())
    lines = result.stderr.splitlines()
    assert result.returncode != 0 and all(line in lines for line in DRIVER_TOOL_LINES.values())
    assert "[install] preflight found 2 problem(s); no installer ran" in lines
    assert node.installer_calls() == [] and touched == set()


def test_the_driver_installers_tools_do_not_matter_once_the_driver_is_in(node):
    node.preinstall({"driver": "24.1.rc2", "firmware": "7.3.0.1.231"})
    node.without_tools("ifconfig", "modinfo")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert not {"ifconfig", "modinfo"} & set((result.stdout + result.stderr).split())


@pytest.mark.parametrize("text, shown", [
    (DEBIAN_12, "Debian GNU/Linux 12 (bookworm) (ID=debian VERSION_ID=12)"),
    (UBUNTU_1804_5, "Ubuntu 18.04.5 LTS (ID=ubuntu VERSION_ID=18.04)"),  # on the 310 and 310P lists, not 910B's
], ids=["on-no-list", "on-another-chips-list"])
def test_an_os_not_on_the_chips_lists_is_a_warning_and_the_install_goes_on(node, text, shown):
    write_os_release(node.root, text)
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    warning = f"[install] WARNING: this host runs {shown}, which is not on {LISTS_910B}; {OS_ADVICE}"
    assert [line for line in result.stdout.splitlines() if "WARNING" in line] == [warning]
    assert len(node.installer_calls()) == 5


def test_a_node_without_os_release_is_warned_about(node):
    write_os_release(node.root, None)
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert f"[install] WARNING: no /etc/os-release, so this host's OS cannot be compared with {LISTS_910B}; " \
           f"{OS_ADVICE}" in result.stdout.splitlines()


def test_a_node_with_every_prerequisite_hears_of_none(node):
    """openEuler 22.03 LTS SP3 (on the 910B list), python3, curl, ifconfig and modinfo present: nothing is said."""
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert not any(word in said for word in ("WARNING", "python3", "sudo", "curl", "ifconfig", "modinfo"))


def test_the_docs_page_shows_each_refusal_as_the_node_prints_it():
    page = " ".join((Path(__file__).resolve().parents[2] / "docs" / "before-you-start.md").read_text().split())
    lines = [f"python3 not found, and this step runs its Python parts with it: {PYTHON_FIX}",
             *DRIVER_TOOL_LINES.values(), SUDO_LINE.format(step="install", probe="env true")]
    for line in lines:
        assert line.removeprefix("[install] ") in page
