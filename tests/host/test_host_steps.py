"""host_steps(): the exact command strings, the staged scripts they name, their determinism, and which triggers and
commands a change moves."""
from __future__ import annotations

import copy
import shlex
import shutil
import subprocess

import pytest

from components.config import parse_stack
from components.host import host_steps, script_set
from components.host.script_set import SET_STEPS, script_text, step_sha256
from components.runner.on_node import RUNNERS, NodeCall, runner_text
from testkit.fakenode.packages import NEW, OLD, stack_config

HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


@pytest.fixture
def raw(packages) -> dict:
    return stack_config(packages, HOST_KEY)


def steps_of(raw: dict) -> dict:
    spec = parse_stack(copy.deepcopy(raw))
    return host_steps(spec, spec.nodes[0])


def env_of(command: str) -> dict[str, str]:
    """The KEY=VALUE assignments of `[bash -c SUDO_CHECK && sudo -n ]env K=V ... bash -c RUNNER ...`, unquoted."""
    words = shlex.split(command)
    words = words[words.index("&&") + 3:] if words[:2] == ["bash", "-c"] else words
    assert words[0] == "env"
    return dict(w.split("=", 1) for w in words[1:words.index("bash")])


def runs(command: str) -> list[tuple[str, str]]:
    """The (step, sha256) pairs after `bash -c RUNNER ascend-npu`: the first runs, every one is taken."""
    words = shlex.split(command)
    tail = words[words.index("ascend-npu") + 1:]
    return list(zip(tail[::2], tail[1::2]))


def test_same_spec_gives_byte_identical_steps(raw):
    first, second = steps_of(raw), steps_of(raw)
    assert first == second
    assert [s.create for s in first.values()] == [s.create for s in second.values()]


def test_install_command_carries_every_parameter_and_names_its_script_by_hash(raw, packages):
    install = steps_of(raw)["install"]
    assert install.create.startswith("env ASCEND_") and runs(install.create) == [("install", step_sha256("install"))]
    assert len(install.create) < 4096
    env = env_of(install.create)
    assert env["ASCEND_DRIVER_VERSION"] == NEW["driver"] and env["ASCEND_TOOLKIT_VERSION"] == NEW["cann"]
    assert env["ASCEND_DRIVER_FILE"] == "Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run"
    assert env["ASCEND_DRIVER_SHA256"] == packages.sha256[env["ASCEND_DRIVER_FILE"]]
    assert env["ASCEND_KERNELS_FILE"] == "Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run"
    assert (env["ASCEND_ENGINE"], env["ASCEND_SOURCE"], env["ASCEND_STAGING"]) == \
        ("containerd", "upload", "/var/cache/ascend-npu/packages")
    assert "ASCEND_ROOT" not in env  # the sandbox belongs to the test node, never to the command


def test_each_rendered_script_is_lib_then_the_step_script_named_by_its_hash_and_is_valid_bash(tmp_path):
    lib = (script_set.SCRIPTS / "lib.sh").read_text()
    for step in SET_STEPS:
        path = script_set.rendered(step, tmp_path)
        assert path == tmp_path / f"{step}.{step_sha256(step)[:16]}.sh"
        text = path.read_text()
        assert text == script_text(step) and text.startswith(lib)
        assert text.endswith((script_set.SCRIPTS / f"{step}.sh").read_text())
        syntax = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert syntax.returncode == 0, syntax.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{s}.{step_sha256(s)[:16]}.sh" for s in SET_STEPS)
    for inlined in RUNNERS:
        syntax = subprocess.run(["bash", "-n"], input=runner_text(inlined), capture_output=True, text=True)
        assert syntax.returncode == 0, syntax.stderr


def test_non_root_user_gets_sudo_checked_first_and_root_does_not(raw):
    root = steps_of(raw)
    assert root["install"].create.startswith("env ") and root["on_destroy"].delete.startswith("bash -c ")
    raw["ssh"]["user"] = "ubuntu"
    for name, step in steps_of(raw).items():
        words = shlex.split(step.create)
        assert words[:2] == ["bash", "-c"] and words[3:6] == ["&&", "sudo", "-n"] and words[6] == "env"
        assert words[2].startswith("said=$(sudo -n env true 2>&1 </dev/null) && exit 0;")
        assert "ssh.user ubuntu needs passwordless sudo" in words[2]
        assert env_of(step.create) == env_of(root[name].create)  # the same parameters behind the check
    delete = shlex.split(steps_of(raw)["on_destroy"].delete)
    assert delete[2].startswith("said=$(sudo -n bash -c true ") and delete[3:7] == ["&&", "sudo", "-n", "bash"]


def test_only_the_nodes_chip_and_arch_packages_are_passed(raw):
    raw["nodes"].append({"name": "infer-01", "address": "10.0.0.9", "hostKey": HOST_KEY, "chip": "310P",
                         "arch": "x86_64", "npuCount": 4})
    raw["packages"]["files"] = [f for f in raw["packages"]["files"] if f.get("chip") != "310P"] + [
        {"kind": "driver", "chip": "310P", "arch": "x86_64", "sha256": "a" * 64,
         "file": "Ascend-hdk-310p-npu-driver_24.1.rc2_linux-x86-64.run"},
        {"kind": "firmware", "chip": "310P", "sha256": "b" * 64,
         "file": "Ascend-hdk-310p-npu-firmware_7.3.0.1.231.run"},
        {"kind": "toolkit", "arch": "x86_64", "sha256": "c" * 64,
         "file": "Ascend-cann-toolkit_8.0.RC3_linux-x86_64.run"},
        {"kind": "kernels", "chip": "310P", "arch": "x86_64", "sha256": "d" * 64,
         "file": "Ascend-cann-kernels-310p_8.0.RC3_linux-x86_64.run"},
        {"kind": "dockerRuntime", "arch": "x86_64", "sha256": "e" * 64,
         "file": "Ascend-docker-runtime_6.0.0_linux-x86_64.run"}]
    spec = parse_stack(raw)
    first, second = (env_of(host_steps(spec, n)["install"].create) for n in spec.nodes)
    assert all("910b" in first[k] or "aarch64" in first[k] for k in first if k.endswith("_FILE"))
    assert all("310p" in second[k] or "x86" in second[k] for k in second if k.endswith("_FILE"))
    assert second["ASCEND_ARCH"] == "x86_64" and second["ASCEND_DRIVER_SHA256"] == "a" * 64


def moved(before: dict, after: dict) -> set[str]:
    """The steps whose call on the node, or triggers, differ."""
    return {name for name in before if (before[name].call, before[name].triggers) !=
            (after[name].call, after[name].triggers)}


def test_a_change_moves_only_the_steps_it_affects_and_verify_follows_install(raw, packages):
    """Each step carries its own call; verify's one trigger is install's call, so it checks again (a replacement)
    whenever install runs again, and a change of the node's own checks moves verify alone."""
    base = steps_of(raw)
    repackaged = copy.deepcopy(raw)
    repackaged["packages"]["files"][0]["sha256"] = "f" * 64
    default_runtime = copy.deepcopy(raw)
    default_runtime["cluster"]["ascendDefaultRuntime"] = True
    recount = copy.deepcopy(raw)
    recount["nodes"][0]["npuCount"] = 4
    assert moved(base, steps_of(repackaged)) == moved(base, steps_of(default_runtime)) == {"install", "verify"}
    assert base["verify"].call == steps_of(repackaged)["verify"].call
    assert moved(base, steps_of(stack_config(packages, HOST_KEY, OLD))) == {"install", "verify"}
    assert moved(base, steps_of(recount)) == {"verify"}
    assert base["install"].triggers == base["on_destroy"].triggers == ()


@pytest.mark.parametrize("script, moved", [("install.sh", {"install"}),
                                           ("engine_containerd.sh", {"install", "on_destroy"}),
                                           ("verify.sh", {"verify"}), ("uninstall.sh", {"on_destroy"}),
                                           ("lib.sh", {"install", "verify", "on_destroy"})])
def test_a_script_edit_changes_the_commands_of_exactly_the_steps_that_run_it(raw, tmp_path, monkeypatch, script,
                                                                           moved):
    """A changed command is an update that re-runs it (pulumi-command v1.2.1); an unchanged one stays as it is."""
    base = steps_of(raw)
    edited = tmp_path / "scripts"
    shutil.copytree(script_set.SCRIPTS, edited)
    (edited / script).write_text((edited / script).read_text() + "# edited\n")
    monkeypatch.setattr(script_set, "SCRIPTS", edited)
    after = steps_of(raw)
    assert {name for name in base if base[name].create != after[name].create} == moved
    assert (base["verify"].triggers != after["verify"].triggers) == ("install" in moved)


def test_turning_uninstall_on_destroy_on_changes_the_on_destroy_record_alone(raw):
    """Install and verify keep their commands (nothing re-runs an installer); the delete text never changes, so the
    state's stored copy of it cannot be stale; only the recorded choice does."""
    kept = steps_of(raw)
    raw["rollout"]["uninstallOnDestroy"] = True
    removed = steps_of(raw)
    for name in ("install", "verify"):
        assert kept[name] == removed[name] and kept[name].delete is None
    assert kept["on_destroy"].delete == removed["on_destroy"].delete == \
        NodeCall("run_destroy", node="fake-npu-01").text("root", "on-destroy")
    assert env_of(kept["on_destroy"].create)["ASCEND_ON_DESTROY"] == "keep"
    assert env_of(removed["on_destroy"].create) == {"ASCEND_NODE": "fake-npu-01", "ASCEND_ON_DESTROY": "uninstall",
                                                    "ASCEND_UNINSTALL_SHA256": step_sha256("uninstall")}
    assert runs(removed["on_destroy"].create) == [("on_destroy", step_sha256("on_destroy")),
                                                  ("uninstall", step_sha256("uninstall"))]


def test_mirror_url_is_passed_quoted(raw):
    raw["packages"] = {"source": "mirror", "mirrorUrl": "https://repo.internal/ascend?release=a&b=c",
                       "files": raw["packages"]["files"]}
    install = steps_of(raw)["install"]
    assert "'https://repo.internal/ascend?release=a&b=c'" in install.create
    assert env_of(install.create)["ASCEND_MIRROR_URL"] == "https://repo.internal/ascend?release=a&b=c"
    assert env_of(install.create)["ASCEND_SOURCE"] == "mirror"
