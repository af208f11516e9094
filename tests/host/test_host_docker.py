"""Docker nodes: daemon.json gets the ascend runtime and keeps everything else, or is left alone."""
from __future__ import annotations

import hashlib
import json

from testkit.fakenode.packages import NEW

RUNTIME = {"path": "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime", "runtimeArgs": []}
DAEMON_JSON = {
    "registry-mirrors": ["https://mirror.internal.example"],
    "insecure-registries": ["10.0.0.5:5000"],
    "log-driver": "json-file",
    "log-opts": {"max-size": "100m", "max-file": "3"},
    "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": ["--debug"]}},
    "exec-opts": ["native.cgroupdriver=systemd"],
    "data-root": "/data/docker",
    "live-restore": True,
    "max-concurrent-downloads": 10,
}


def write_daemon_json(node, text: str, mode: int = 0o600):
    path = node.path("/etc/docker/daemon.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_merge_keeps_every_other_key_and_value(node):
    original = json.dumps(DAEMON_JSON, indent=4)
    path = write_daemon_json(node, original, mode=0o644)
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode == 0, result.stderr
    merged = json.loads(path.read_text())
    expected = json.loads(original)
    expected["runtimes"]["ascend"] = RUNTIME
    assert merged == expected  # in particular no default-runtime: the stack did not ask for one
    # The runtime installer (which makes ascend the default and chmods 600) only ever saw a scratch copy.
    assert path.stat().st_mode & 0o777 == 0o644
    backup = path.with_name(f"daemon.json.bak.{hashlib.sha256(original.encode()).hexdigest()[:12]}")
    assert backup.read_text() == original
    assert node.systemctl_calls() == ["restart docker"]
    assert ("dockerRuntime", "--install --install-scene=docker "
            "--config-file-path=/var/lib/ascend-npu/runtime-installer/engine-config") in node.installers_run()


def test_default_runtime_is_set_only_when_asked(node):
    path = write_daemon_json(node, json.dumps(DAEMON_JSON))
    assert node.run_step(node.spec(runtime="docker", default_runtime=True), "install").returncode == 0
    expected = json.loads(json.dumps(DAEMON_JSON))
    expected["runtimes"]["ascend"] = RUNTIME
    expected["default-runtime"] = "ascend"
    assert json.loads(path.read_text()) == expected
    node.clear_logs()
    assert node.run_step(node.spec(runtime="docker", default_runtime=False), "install").returncode == 0
    del expected["default-runtime"]
    assert json.loads(path.read_text()) == expected
    assert node.installer_calls() == [] and node.systemctl_calls() == ["restart docker"]


def test_invalid_daemon_json_is_left_byte_for_byte_and_nothing_installs(node):
    broken = '{\n  "log-driver": "json-file",\n  "log-opts": {"max-size": "100m",}\n}\n'
    path = write_daemon_json(node, broken)
    result = node.run_step(node.spec(runtime="docker"), "install")
    assert result.returncode != 0
    assert path.read_bytes() == broken.encode()
    assert "docker: /etc/docker/daemon.json is not valid JSON (" in result.stderr
    assert "it was left untouched" in result.stderr and "no installer ran" in result.stderr
    assert node.installer_calls() == [] and node.systemctl_calls() == []
    assert list(path.parent.iterdir()) == [path]


def test_docker_is_not_restarted_when_nothing_changed(node):
    write_daemon_json(node, json.dumps(DAEMON_JSON))
    node.preinstall(NEW, scene="docker")
    spec = node.spec(runtime="docker")
    assert node.run_step(spec, "install").returncode == 0
    assert node.installer_calls() == [] and node.systemctl_calls() == ["restart docker"]
    node.clear_logs()
    again = node.run_step(spec, "install")
    assert again.returncode == 0 and node.systemctl_calls() == []
    assert "docker not restarted" in again.stdout


def test_a_host_without_daemon_json_gets_one(node):
    node.preinstall(NEW, scene="docker")
    assert node.run_step(node.spec(runtime="docker"), "install").returncode == 0
    assert json.loads(node.path("/etc/docker/daemon.json").read_text()) == {"runtimes": {"ascend": RUNTIME}}
