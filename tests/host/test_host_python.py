"""The Python parts of the host scripts on their own: durable writes, dockerd's JSON, TOML imports, versions."""
from __future__ import annotations

import ast
import errno
import json
import os
import re
import shutil
import subprocess

import pytest

from components.host import script_set as commands
from tests.host.python_parts import part

config_files, originals, daemon_json, containerd_config, versions = (part(name) for name in (
    "config_files", "originals", "daemon_json", "containerd_config", "versions"))
PARTS = sorted(p.stem for p in commands.SCRIPTS.glob("*.py"))


# The floor the steps check on the node before any Python part runs (lib.sh, require_python3).
FLOOR = tuple(int(n) for n in re.search(r"^PYTHON_MIN=(\d+\.\d+)$", (commands.SCRIPTS / "lib.sh").read_text(),
                                        re.M).group(1).split("."))


@pytest.mark.parametrize("name", PARTS)
def test_each_part_is_python_of_the_checked_floor_with_a_main(name):
    """Nodes run their own python3 (3.6 on the oldest supported distributions), checked before any part runs."""
    assert FLOOR == (3, 6)
    tree = ast.parse((commands.SCRIPTS / f"{name}.py").read_text(), feature_version=FLOOR)
    assert ast.get_docstring(tree)
    assert any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body)


def test_every_part_travels_with_a_step():
    assert set(PARTS) == {name.removesuffix(".py") for names in commands.STEP_PYTHON.values() for name in names}


def test_bundle_runs_a_part_with_the_nodes_python3(tmp_path):
    bundle = commands.python_bundle("install")
    program = bundle.split("\n", 1)[1].rsplit("ASCEND_NPU_PYTHON", 1)[0]
    python3 = shutil.which("python3", path="/usr/bin:/bin")
    newer = subprocess.run([python3, "-c", program, "versions", "newer", "24.1.rc3", "24.1.rc2"])
    older = subprocess.run([python3, "-c", program, "versions", "newer", "v6.0.0", "6.0.0"])
    assert (newer.returncode, older.returncode) == (0, 1)


def owned(path, text: str, mode: int = 0o640, owner=(1000, 1000)):
    path.write_text(text)
    os.chown(path, *owner)
    path.chmod(mode)
    return path


def state(path):
    status = path.stat()
    return status.st_mode & 0o777, status.st_uid, status.st_gid


@pytest.fixture
def as_root():
    if os.geteuid() != 0:
        pytest.skip("chown needs root (CI runs as root)")


def test_replace_writes_through_a_link_and_keeps_owner_mode_and_a_backup(tmp_path, as_root):
    target = owned(tmp_path / "managed.json", "{}\n")
    link = tmp_path / "daemon.json"
    link.symlink_to(target)
    backup = config_files.replace(str(link), b'{"a": 1}\n')
    assert link.is_symlink() and target.read_text() == '{"a": 1}\n' and state(target) == (0o640, 1000, 1000)
    assert open(backup).read() == "{}\n" and backup.startswith(str(link) + ".bak.")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["managed.json", "daemon.json",
                                                                 os.path.basename(backup)])


def test_an_existing_backup_is_trusted_only_when_its_bytes_match(tmp_path, as_root):
    path = owned(tmp_path / "daemon.json", '{"x": 1}\n')
    status = path.stat()
    name = config_files.backup(str(path), path.read_bytes(), status)
    open(name, "w").close()  # a disk that filled up left it empty
    assert config_files.backup(str(path), path.read_bytes(), status) == name
    assert open(name).read() == '{"x": 1}\n'


def test_a_full_disk_names_the_file_and_leaves_the_original_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "daemon.json"
    path.write_text("original\n")
    real_write = os.write

    def full(fd, data):
        if len(data) > 3:
            return real_write(fd, bytes(data)[:3])  # a short write, then nothing fits
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "write", full)
    with pytest.raises(config_files.Refused) as refused:
        config_files.write_durably(str(path), b"new content\n")
    assert str(refused.value) == (f"no space left on the device holding {tmp_path} while writing {path}; "
                                  "free some space there, then rerun")
    assert path.read_text() == "original\n" and [p.name for p in tmp_path.iterdir()] == ["daemon.json"]


def test_saved_original_survives_and_is_checked(tmp_path, as_root):
    path, saved = owned(tmp_path / "config.toml", "version = 2\n"), str(tmp_path / "state")
    assert originals.save_original(str(path), saved) == "saved"
    assert originals.save_original(str(path), saved) == "kept"  # an earlier save is never overwritten
    owned(path, "version = 2\n# the installer's\n", mode=0o600, owner=(0, 0))
    assert originals.restore_original(str(path), saved) == "restored"
    assert path.read_text() == "version = 2\n" and state(path) == (0o640, 1000, 1000)
    data_file, _ = originals.journal(str(path), saved)
    with open(data_file, "w") as f:
        f.write("version = 2\n# half")  # a copy that does not match its checksum is not trusted
    assert originals.load_original(str(path), saved) is None
    assert originals.restore_original(str(path), saved) == "none"


def test_forget_if_unchanged_keeps_a_save_the_file_no_longer_matches(tmp_path):
    path, saved = tmp_path / "daemon.json", str(tmp_path / "state")
    path.write_text("{}\n")
    originals.save_original(str(path), saved)
    path.write_text('{"default-runtime": "ascend"}\n')
    assert originals.forget_if_unchanged(str(path), saved) == "kept"
    path.write_text("{}\n")
    assert originals.forget_if_unchanged(str(path), saved) == "forgotten"
    assert originals.load_original(str(path), saved) is None


@pytest.mark.parametrize("text, reason", [
    ('{"a": NaN}', "NaN is not a JSON number"), ('{"a": Infinity}', "Infinity is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ('{"log-opts": {"max-size": "1m", "max-size": "2m"}}', "key 'max-size' is written twice"),
    ('[]', "not a JSON object"), ('{"runtimes": []}', "'runtimes' object")])
def test_daemon_json_is_read_as_dockerd_reads_it(text, reason):
    with pytest.raises(daemon_json.Invalid, match=reason.replace("(", r"\(")):
        daemon_json.parse(text.encode())


@pytest.mark.parametrize("before, recorded, make_default, after, record", [
    ({"default-runtime": "nvidia"}, "", True, "ascend", "nvidia"),
    ({"default-runtime": "ascend"}, "nvidia", True, "ascend", "nvidia"),
    ({"default-runtime": "ascend"}, "nvidia", False, "nvidia", ""),
    ({}, "", True, "ascend", ""),
    ({"default-runtime": "ascend"}, "", False, None, ""),
    ({"default-runtime": "ascend"}, "gone", False, None, ""),  # a runtime no longer defined is not given back
])
def test_the_users_default_runtime_is_recorded_and_given_back(before, recorded, make_default, after, record):
    old = dict(before, runtimes={"nvidia": {"path": "nvidia-container-runtime"}})
    new, kept = daemon_json.merge(old, "add", make_default, "/bin/ascend", recorded)
    assert (new.get("default-runtime"), kept) == (after, record)
    assert new["runtimes"]["nvidia"] == old["runtimes"]["nvidia"]


MULTI_LINE = 'version = 3\nimports = [\n  "a.toml", # first\n  # later ones here\n]  # end\n\n[plugins]\n'


@pytest.mark.parametrize("text, added", [
    ('version = 2\nimports = ["a.toml"]\n', 'version = 2\nimports = ["a.toml", "x.toml"]\n'),
    ('version = 2\nimports = []\n', 'version = 2\nimports = ["x.toml"]\n'),
    ('version = 2\n', 'version = 2\nimports = ["x.toml"]\n'),
    (MULTI_LINE, MULTI_LINE.replace('"a.toml",', '"a.toml", "x.toml",')),
    ('version = 2\nimports = ["a\\"b.toml", \'c.toml\'] # x\n',
     'version = 2\nimports = ["a\\"b.toml", \'c.toml\', "x.toml"] # x\n'),
])
def test_imports_edits_keep_every_comment_and_round_trip(text, added):
    assert containerd_config.edit_imports(text, "x.toml", add=True) == added
    # An empty `imports = []` and no imports at all mean the same: both come back as the latter.
    assert containerd_config.edit_imports(added, "x.toml", add=False) == text.replace("imports = []\n", "")


def test_an_unclosed_imports_array_is_refused():
    with pytest.raises(ValueError, match="not closed"):
        containerd_config.edit_imports('version = 2\nimports = [\n "a.toml",\n', "x.toml", add=True)


def test_ascend_runtime_takes_runc_cgroup_setting_or_none():
    with_none, with_true = ["version = 2"], ["version = 2"]
    containerd_config.add_runtime(with_none, "2", "false", "", "/bin/ascend")
    containerd_config.add_runtime(with_true, "2", "false", "true", "/bin/ascend")
    assert not any("SystemdCgroup" in line for line in with_none)
    assert "  SystemdCgroup = true" in with_true


@pytest.mark.parametrize("installed, wanted, verdict", [
    ("24.1.rc3", "24.1.rc2", True), ("24.1.0", "24.1.rc3", True), ("24.1.rc2", "24.1.0", False),
    ("8.0.0", "8.0.RC3", True), ("7.5.0.1.129", "7.3.0.1.231", True), ("v6.0.0", "6.0.RC3", True),
    ("25.0.rc1.1", "25.0.rc1", True), ("6.0.RC3", "6.0.RC3", False), ("24.1.rc2", "24.1.T5", None)])
def test_versions_are_ordered_as_huawei_releases_are(installed, wanted, verdict):
    assert versions.newer(installed, wanted) is verdict


def test_daemon_json_apply_records_before_and_forgets_after(tmp_path):
    path, record = tmp_path / "daemon.json", tmp_path / "default-runtime.docker"
    path.write_text(json.dumps({"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "n"}}}))
    assert daemon_json.apply(str(path), "add", True, "/bin/ascend", str(record)).startswith("changed backup=")
    assert record.read_text() == "nvidia\n" and json.loads(path.read_text())["default-runtime"] == "ascend"
    daemon_json.apply(str(path), "add", False, "/bin/ascend", str(record))
    assert json.loads(path.read_text())["default-runtime"] == "nvidia" and not record.exists()
