"""host_steps(): the exact command strings and stdin, their determinism, and which triggers a change moves."""
from __future__ import annotations

import copy
import shlex
import shutil
import subprocess

import pytest

from components.config import parse_stack
from components.host import commands, host_steps, script_text
from testkit.fakenode.packages import NEW, OLD, stack_config

HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


@pytest.fixture
def raw(packages) -> dict:
    return stack_config(packages, HOST_KEY)


def steps_of(raw: dict) -> dict:
    spec = parse_stack(copy.deepcopy(raw))
    return host_steps(spec, spec.nodes[0])


def env_of(command: str) -> dict[str, str]:
    """The KEY=VALUE assignments of `[sudo -n ]env K=V ... bash -s`, after shell unquoting."""
    words = shlex.split(command)
    words = words[2:] if words[:2] == ["sudo", "-n"] else words
    assert words[0] == "env"
    assignments = [w for w in words[1:] if "=" in w and w.split("=", 1)[0].isupper()]
    return dict(w.split("=", 1) for w in assignments)


def test_same_spec_gives_byte_identical_steps(raw):
    first, second = steps_of(raw), steps_of(raw)
    assert first == second
    assert [s.create for s in first.values()] == [s.create for s in second.values()]


def test_install_command_carries_every_parameter_and_reads_the_script_from_stdin(raw, packages):
    install = steps_of(raw)["install"]
    assert install.create.startswith("env ASCEND_") and install.create.endswith(" bash -s")
    env = env_of(install.create)
    assert env["ASCEND_DRIVER_VERSION"] == NEW["driver"] and env["ASCEND_CANN_VERSION"] == NEW["cann"]
    assert env["ASCEND_DRIVER_FILE"] == "Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run"
    assert env["ASCEND_DRIVER_SHA256"] == packages.sha256[env["ASCEND_DRIVER_FILE"]]
    assert env["ASCEND_KERNELS_FILE"] == "Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run"
    assert (env["ASCEND_ENGINE"], env["ASCEND_SOURCE"], env["ASCEND_STAGING"]) == \
        ("containerd", "upload", "/var/cache/ascend-npu/packages")
    assert "ASCEND_ROOT" not in env  # the sandbox belongs to the test node, never to the command


def test_stdin_is_lib_then_the_step_script_and_is_valid_bash(raw):
    steps = steps_of(raw)
    lib = (commands.SCRIPTS / "lib.sh").read_text()
    for name, step in steps.items():
        assert step.stdin.startswith(lib)
        assert step.stdin.endswith((commands.SCRIPTS / f"{name}.sh").read_text())
        syntax = subprocess.run(["bash", "-n"], input=step.stdin, capture_output=True, text=True)
        assert syntax.returncode == 0, syntax.stderr


def test_non_root_user_gets_sudo_and_root_does_not(raw):
    assert steps_of(raw)["install"].create.startswith("env ")
    raw["ssh"]["user"] = "ubuntu"
    for step in steps_of(raw).values():
        assert step.create.startswith("sudo -n env ")


def test_only_the_nodes_chip_and_arch_packages_are_passed(raw):
    raw["nodes"].append({"name": "infer-01", "address": "10.0.0.9", "hostKey": HOST_KEY, "chip": "310P",
                         "arch": "x86_64", "npuCount": 4})
    raw["packages"]["files"] += [
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


def changed(before: dict, after: dict) -> dict[str, set[str]]:
    """Per step, the trigger names whose hash differs."""
    return {name: {a.split(":")[0] for a, b in zip(before[name].triggers, after[name].triggers) if a != b}
            for name in before}


def test_triggers_move_only_for_the_step_a_change_affects(raw, packages):
    base = steps_of(raw)
    repackaged = copy.deepcopy(raw)
    repackaged["packages"]["files"][0]["sha256"] = "f" * 64
    default_runtime = copy.deepcopy(raw)
    default_runtime["cluster"]["ascendDefaultRuntime"] = True
    assert changed(base, steps_of(repackaged)) == {"install": {"packages"}, "verify": set()}
    assert changed(base, steps_of(default_runtime)) == {"install": {"settings"}, "verify": set()}
    older = stack_config(packages, HOST_KEY, OLD)
    assert changed(base, steps_of(older)) == {"install": {"versions", "packages"}, "verify": {"versions"}}


@pytest.mark.parametrize("script, moved", [("install.sh", {"install": {"script"}, "verify": set()}),
                                           ("engine_containerd.sh", {"install": {"script"}, "verify": set()}),
                                           ("verify.sh", {"install": set(), "verify": {"script"}}),
                                           ("lib.sh", {"install": {"script"}, "verify": {"script"}})])
def test_a_script_edit_moves_the_script_trigger_of_the_steps_that_run_it(raw, tmp_path, monkeypatch, script, moved):
    base = steps_of(raw)
    edited = tmp_path / "scripts"
    shutil.copytree(commands.SCRIPTS, edited)
    (edited / script).write_text((edited / script).read_text() + "# edited\n")
    monkeypatch.setattr(commands, "SCRIPTS", edited)
    assert changed(base, steps_of(raw)) == moved


def test_delete_uninstalls_only_when_the_stack_asks(raw):
    assert all(step.delete is None for step in steps_of(raw).values())
    raw["rollout"]["uninstallOnDestroy"] = True
    steps = steps_of(raw)
    words = shlex.split(steps["install"].delete)
    assert words[-3:-1] == ["bash", "-c"] and words[-1] == script_text("uninstall")
    assert env_of(steps["install"].delete) == env_of(steps["install"].create)
    assert steps["verify"].delete is None


def test_mirror_url_is_passed_quoted(raw):
    raw["packages"] = {"source": "mirror", "mirrorUrl": "https://repo.internal/ascend?release=a&b=c",
                       "files": raw["packages"]["files"]}
    install = steps_of(raw)["install"]
    assert "'https://repo.internal/ascend?release=a&b=c'" in install.create
    assert env_of(install.create)["ASCEND_MIRROR_URL"] == "https://repo.internal/ascend?release=a&b=c"
    assert env_of(install.create)["ASCEND_SOURCE"] == "mirror"
