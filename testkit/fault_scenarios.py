"""Faults injected into the fake node over real SSH, each with what must hold; shared by the tests and `make bench`.

A scenario sets the fault up, runs the step(s), asserts what the user must see and keep, and returns an Outcome:
the bytes of user config lost (always 0 when it holds) and the line the node printed about the fault.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from testkit.fakenode.loss import daemon_json_lost, text_lost
from testkit.fakenode.packages import NEW, OLD
from testkit.fakenode.runs import alive, holder, is_locked, kill_run, wait_for

RUNTIME = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"
USER_DAEMON_JSON = {
    "registry-mirrors": ["https://mirror.internal.example"],
    "log-driver": "json-file",
    "log-opts": {"max-size": "100m", "max-file": "3"},
    "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}},
    "default-runtime": "nvidia",
    "data-root": "/data/docker",
}


@dataclass(frozen=True)
class Outcome:
    bytes_lost: int
    message: str


def line_with(text: str, fragment: str) -> str:
    """The output line holding FRAGMENT (an AssertionError when there is none)."""
    found = [line for line in text.splitlines() if fragment in line]
    assert found, f"no line with {fragment!r} in:\n{text}"
    return found[0]


def daemon_json(node, content: dict | str = None, mode: int = 0o640, owner: tuple[int, int] = (1000, 1000),
                at: str = "/etc/docker/daemon.json"):
    """Write the user's daemon.json (at AT; /etc/docker/daemon.json links to it when AT is elsewhere)."""
    text = content if isinstance(content, str) else json.dumps(content or USER_DAEMON_JSON, indent=4) + "\n"
    path = node.path(at)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chown(path, *owner)
    path.chmod(mode)
    link = node.path("/etc/docker/daemon.json")
    if at != "/etc/docker/daemon.json":
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)  # absolute, as config management writes it (the sandbox's path of AT)
    return path, text.encode()


def assert_owner_mode(path, mode: int, owner: tuple[int, int]) -> None:
    status = path.stat()
    assert (status.st_mode & 0o777, status.st_uid, status.st_gid) == (mode, *owner)


def with_runtime(config: dict, default: str | None = "nvidia") -> dict:
    """The user's config plus the stack's ascend runtime (and the default runtime it should end with)."""
    merged = json.loads(json.dumps(config))
    merged["runtimes"]["ascend"] = {"path": RUNTIME, "runtimeArgs": []}
    if default:
        merged["default-runtime"] = default
    return merged


def symlinked_daemon_json(node) -> Outcome:
    """daemon.json is a symbolic link (config management): written through to its target, owner and mode kept."""
    target, original = daemon_json(node, at="/srv/config-management/docker/daemon.json")
    node.preinstall({k: v for k, v in NEW.items() if k != "dockerRuntime"}, scene="docker")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode == 0, result.stderr
    link = node.path("/etc/docker/daemon.json")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text()) == with_runtime(USER_DAEMON_JSON)
    assert_owner_mode(target, 0o640, (1000, 1000))
    return Outcome(daemon_json_lost(original, target.read_bytes()), line_with(result.stdout, "docker: ascend runtime"))


def symlink_to_read_only_target(node) -> Outcome:
    """daemon.json links to a file on a read-only file system: refused before any installer, nothing changed."""
    target, original = daemon_json(node, at="/srv/config-management/docker/daemon.json")
    node.knob("read-only", "srv/config-management")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode != 0 and "no installer ran" in result.stderr
    message = line_with(result.stderr, "is a symbolic link to /srv/config-management/docker/daemon.json, which "
                                       "cannot be written")
    assert node.installer_calls() == [] and target.read_bytes() == original
    return Outcome(daemon_json_lost(original, target.read_bytes()), message)


def runtime_installer_chmods_the_config(node) -> Outcome:
    """The runtime installer makes ascend Docker's default and chmods the file 600 (run_main.sh of v6.0.0): it is
    handed a scratch config, so the user's daemon.json keeps its default (nvidia), owner and mode."""
    path, original = daemon_json(node)
    result = node.run_step(node.spec(OLD, runtime="docker"), "install")
    assert result.returncode == 0, result.stderr
    runtime_args = [call["args"] for call in node.installer_calls() if call["kind"] == "dockerRuntime"][0]
    assert "--config-file-path=/var/lib/ascend-npu/runtime-installer/engine-config" in runtime_args
    message = line_with(result.stdout, "docker: ascend runtime added in /etc/docker/daemon.json")
    assert json.loads(path.read_text()) == with_runtime(USER_DAEMON_JSON)  # nvidia stays the default
    assert_owner_mode(path, 0o640, (1000, 1000))
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def full_disk_at_the_backup(node) -> Outcome:
    """/etc is full when the backup is written: reported by name, no traceback, original intact, no temp file."""
    path, original = daemon_json(node)
    node.preinstall(NEW, scene="docker")
    node.knob("disk-full", "etc/docker")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    message = line_with(result.stderr, "no space left on the device holding /etc/docker while writing "
                                       "/etc/docker/daemon.json.bak.")
    assert path.read_bytes() == original and sorted(p.name for p in path.parent.iterdir()) == ["daemon.json"]
    assert node.systemctl_calls() == []
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def full_disk_before_any_installer(node) -> Outcome:
    """The whole disk is full: the original cannot be saved, so no installer runs."""
    path, original = daemon_json(node)
    node.knob("disk-full", "")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    message = line_with(result.stderr, "cannot save the original of /etc/docker/daemon.json before the installers "
                                       "run: no space left on the device")
    assert "no installer ran" in message and node.installer_calls() == [] and path.read_bytes() == original
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def session_killed_after_the_installer_wrote(node) -> Outcome:
    """The run is killed (SIGKILL) right after the runtime installer wrote its config; the next run completes."""
    path, original = daemon_json(node)
    spec = node.spec(OLD, runtime="docker")
    node.knob("hold-dockerRuntime", "30")
    client = node.start_step(spec, "install")
    scratch = node.path("/var/lib/ascend-npu/runtime-installer/engine-config")
    wait_for(lambda: scratch.exists() and '"default-runtime": "ascend"' in scratch.read_text(), timeout=90,
             what="the runtime installer to rewrite the config it was handed")
    kill_run(node.root)
    client.wait(timeout=30)
    assert path.read_bytes() == original  # the installer only ever wrote its scratch copy
    node.knob("hold-dockerRuntime")
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    message = line_with(result.stdout, "docker: ascend runtime added in /etc/docker/daemon.json")
    assert json.loads(path.read_text()) == with_runtime(USER_DAEMON_JSON)
    assert_owner_mode(path, 0o640, (1000, 1000))
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def second_run_while_one_is_active(node) -> Outcome:
    """A second install starts while one runs: refused, naming the holder; installers never run side by side."""
    path, original = daemon_json(node)
    spec = node.spec(runtime="docker")
    node.knob("installer-sleep", "2")
    first = node.start_step(spec, "install")
    wait_for(lambda: holder(node.root).get("pid") and is_locked(node.root), what="the first run to take the lock")
    second = node.run_step(spec, "install")
    assert second.returncode != 0
    message = line_with(second.stderr, f"another ascend-npu install is running on this node (pid "
                                       f"{holder(node.root)['pid']}, since ")
    assert first.wait(timeout=180) == 0, first.stderr.read()
    assert [kind for kind, _ in node.installers_run()] == ["driver", "firmware", "toolkit", "kernels",
                                                          "dockerRuntime"]
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def connection_dropped_mid_run(node) -> Outcome:
    """The SSH connection drops mid-run: the orphaned run is recognised, a rerun waits for it, then completes."""
    path, original = daemon_json(node)
    spec = node.spec(runtime="docker")
    node.knob("installer-sleep", "2")
    client = node.start_step(spec, "install")
    wait_for(lambda: holder(node.root).get("session") and is_locked(node.root), what="the run to take the lock")
    session = int(holder(node.root)["session"])
    client.kill()  # the client side of the connection vanishes, as with a dropped network
    client.wait(timeout=30)
    wait_for(lambda: not alive(session), what="sshd to close the dropped session")
    rerun = node.run_step(spec, "install")
    assert rerun.returncode != 0
    message = line_with(rerun.stderr, f"although its SSH session (pid {session}) is gone")
    wait_for(lambda: not is_locked(node.root), timeout=180, what="the orphaned run to finish")
    assert [kind for kind, _ in node.installers_run()] == ["driver", "firmware", "toolkit", "kernels",
                                                          "dockerRuntime"]
    node.knob("installer-sleep")
    again = node.run_step(spec, "install")
    assert again.returncode == 0, again.stderr
    assert json.loads(path.read_text()) == with_runtime(USER_DAEMON_JSON)
    return Outcome(daemon_json_lost(original, path.read_bytes()), message)


def backup_left_empty_by_a_full_disk(node) -> Outcome:
    """An earlier full disk left the backup's name with 0 bytes: it is checked, not trusted, and written again."""
    path, original = daemon_json(node)
    node.preinstall(NEW, scene="docker")
    stale = path.with_name("daemon.json.bak." + hashlib.sha256(original).hexdigest()[:12])
    stale.write_bytes(b"")
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode == 0, result.stderr
    assert stale.read_bytes() == original
    assert_owner_mode(stale, 0o640, (1000, 1000))
    return Outcome(daemon_json_lost(original, path.read_bytes()),
                   line_with(result.stdout, f"backup /etc/docker/{stale.name}"))


CONFIG_TOML = """version = 2
# registry and sandbox image of the platform team
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.internal/pause:3.9"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = true
"""


def config_toml(node, at: str = "/etc/containerd/config.toml"):
    """Write the user's config.toml (at AT; /etc/containerd/config.toml links to it when AT is elsewhere)."""
    path = node.path(at)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG_TOML)
    os.chown(path, 1000, 1000)
    path.chmod(0o640)
    if at != "/etc/containerd/config.toml":
        node.path("/etc/containerd").mkdir(parents=True, exist_ok=True)
        node.path("/etc/containerd/config.toml").symlink_to(path)
    node.preinstall(NEW)
    return path


def symlinked_config_toml(node) -> Outcome:
    """containerd's config.toml is a symbolic link: the runtime lands in its target, owner and mode kept."""
    target = config_toml(node, at="/srv/config-management/containerd/config.toml")
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert node.path("/etc/containerd/config.toml").is_symlink()
    assert target.read_text().startswith(CONFIG_TOML) and "runtimes.ascend]" in target.read_text()
    assert_owner_mode(target, 0o640, (1000, 1000))
    return Outcome(text_lost(CONFIG_TOML, target.read_text()), line_with(result.stdout, "containerd: ascend runtime"))


def full_disk_at_the_containerd_candidate(node) -> Outcome:
    """/etc is full when the candidate config.toml is written: the real cause named, no traceback, no temp file."""
    path = config_toml(node)
    node.knob("disk-full", "etc/containerd")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0 and "Traceback" not in result.stderr and "imports" not in result.stderr
    message = line_with(result.stderr, "no space left on the device holding /etc/containerd while writing a new "
                                       "/etc/containerd/config.toml")
    assert path.read_text() == CONFIG_TOML and sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]
    return Outcome(text_lost(CONFIG_TOML, path.read_text()), message)


def temp_files_of_a_killed_run(node) -> Outcome:
    """A run killed outright (no exit trap) left candidate files next to config.toml: the next run removes them."""
    path = config_toml(node)
    for name in ("config.toml.ascend-npu.Xy12Ab", ".config.toml.ascend-npu.k9Lm3q"):
        (path.parent / name).write_text(CONFIG_TOML[:20])
    result = node.run_step(node.spec(), "install")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in path.parent.iterdir() if ".ascend-npu." in p.name) == []
    return Outcome(text_lost(CONFIG_TOML, path.read_text()), line_with(result.stdout, "removed 2 temp file(s)"))


SCENARIOS = (symlinked_daemon_json, symlinked_config_toml, full_disk_at_the_containerd_candidate,
             temp_files_of_a_killed_run, symlink_to_read_only_target, runtime_installer_chmods_the_config,
             full_disk_at_the_backup, full_disk_before_any_installer, backup_left_empty_by_a_full_disk,
             session_killed_after_the_installer_wrote, second_run_while_one_is_active, connection_dropped_mid_run)
