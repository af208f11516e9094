"""A rerun with nothing to do changes nothing on the node: every record under /var/lib/ascend-npu, and every file
under /etc, keeps its inode and its modification time; records change only when their content does.

Allowed to change, and why: /var/log/ascend-npu/run.log (each run appends what it said, with its time), and the
modification times of directories under /var/lib/ascend-npu (each run makes and removes its temp files, the engine
config's saved original and the run lock's holder record there)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

STEPS = ("install", "verify", "on_destroy")


def files(node) -> dict[str, tuple[int, int]]:
    """Every file (or link) under the node's /var/lib/ascend-npu and /etc: its inode and modification time."""
    found = {}
    for top in ("/var/lib/ascend-npu", "/etc"):
        for path in sorted(node.path(top).rglob("*")):
            if path.is_symlink() or path.is_file():
                status = path.lstat()
                found[str(path.relative_to(node.root))] = (status.st_ino, status.st_mtime_ns)
    return found


def run_all(node, spec) -> None:
    for step in STEPS:
        result = node.run_step(spec, step)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("runtime, default_runtime", [("containerd", True), ("docker", True), ("docker", False)])
def test_a_second_run_with_nothing_to_do_leaves_every_file_as_it_was(node, runtime, default_runtime):
    if runtime == "docker":
        node.path("/etc/docker").mkdir(parents=True)
        node.path("/etc/docker/daemon.json").write_text(json.dumps({"runtimes": {"kata": {"path": "/bin/kata"}},
                                                                    "default-runtime": "kata"}))
    else:
        node.path("/etc/containerd").mkdir(parents=True)
        node.path("/etc/containerd/config.toml").write_text("version = 2\n")
    spec = node.spec(runtime=runtime, default_runtime=default_runtime, uninstall=True)
    assert node.run_step(spec, "install").returncode == 0
    node.reboot()  # the reboot the new firmware asked for; the next run forgets its mark
    run_all(node, spec)
    before = files(node)
    assert "var/lib/ascend-npu/install.env" in before and "var/lib/ascend-npu/on-destroy.env" in before
    assert "var/lib/ascend-npu/run.lock.holder" not in before  # it goes with the lock
    log = node.path("/var/log/ascend-npu/run.log")
    said = log.stat().st_size
    node.clear_logs()
    run_all(node, spec)
    assert files(node) == before
    assert node.installer_calls() == [] and node.systemctl_calls() == []
    assert log.stat().st_size > said


def test_a_record_is_replaced_when_its_content_changes(node):
    node.path("/etc/containerd").mkdir(parents=True)
    node.path("/etc/containerd/config.toml").write_text("version = 2\n")
    assert node.run_step(node.spec(), "install").returncode == 0
    node.reboot()
    run_all(node, node.spec())
    record = node.path("/var/lib/ascend-npu/on-destroy.env")
    before = record.stat()
    assert node.run_step(node.spec(uninstall=True), "on_destroy").returncode == 0
    assert "ASCEND_ON_DESTROY=uninstall" in record.read_text().splitlines()
    assert record.stat().st_ino != before.st_ino and record.stat().st_mode & 0o777 == 0o600
    assert not [p for p in Path(record.parent).iterdir() if p.name.startswith(".")]  # no temp file left
