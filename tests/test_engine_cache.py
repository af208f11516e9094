"""The engine cache (engine/build.sh, engine/cache.py): one per machine, shared by clones, keyed by versions.sh.

engine/build.sh's own functions are run on a one-line Go program built by the real Go toolchain (the seven real
binaries take 20 minutes: `make engine` and the end-to-end run build them).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engine import cache

BUILD_SH = cache.REPO / "engine" / "build.sh"
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


def test_the_set_key_is_the_one_build_sh_computes():
    done = subprocess.run(["bash", "-c", f'. "{BUILD_SH}"; echo "$KEY $SET"'], capture_output=True, text=True,
                          check=True, env={**os.environ, "ENGINE_DIR": "/nonexistent/engine"})
    key, set_dir = done.stdout.split()
    assert key == cache.set_key() and set_dir == f"/nonexistent/engine/sets/{cache.set_key()}"


@pytest.mark.parametrize("environ, where", [
    ({"ENGINE_DIR": "/e", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/e"),
    ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/ascend-npu/engine"),
    ({"XDG_CACHE_HOME": "", "HOME": "/h"}, "/h/.cache/ascend-npu/engine"),
])
def test_the_cache_lies_outside_the_clone_unless_engine_dir_says(environ, where):
    assert cache.engine_dir(environ) == Path(where)
    script = f'. "{BUILD_SH}"; echo "$ENGINE_DIR"'
    shown = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True,
                           env={"PATH": os.environ["PATH"], **environ}).stdout.strip()
    assert shown == where


def fake_set(root: Path) -> Path:
    """A set whose every binary is a small file stamped as build.sh stamps it."""
    set_dir = root / "sets" / "k"
    (set_dir / "bin").mkdir(parents=True)
    for name in cache.BINARIES:
        build = root / "builds" / f"{name}@v1"
        build.mkdir(parents=True)
        (build / name).write_text(f"#!/bin/sh\necho {name}\n")
        (build / name).chmod(0o755)
        (build / f"{name}.sha256").write_text(f"{cache.file_sha256(build / name)}  {name}\n")
        (set_dir / "bin" / name).symlink_to(f"../../../builds/{name}@v1/{name}")
    (root / "builds" / "kwok@v1" / "stage").mkdir()
    (root / "builds" / "kwok@v1" / "stage" / ".complete").touch()
    (set_dir / "kwok-stage").symlink_to("../../builds/kwok@v1/stage")
    return set_dir


def test_a_corrupt_or_missing_binary_keeps_the_end_to_end_run_from_starting(tmp_path):
    set_dir = fake_set(tmp_path)
    assert cache.build_problems(set_dir) == []
    with (tmp_path / "builds" / "etcd@v1" / "etcd").open("ab") as f:
        f.write(b"\0")
    (tmp_path / "builds" / "kwok@v1" / "kwok").unlink()
    assert cache.build_problems(set_dir) == [
        f"etcd does not match its checksum ({tmp_path / 'builds' / 'etcd@v1' / 'etcd.sha256'})",
        f"kwok not in {set_dir / 'bin'}"]


needs_go = pytest.mark.skipif(GO is None, reason="no Go toolchain (the polyglot machine has /usr/local/go)")


@pytest.fixture(scope="module")
def gocache(tmp_path_factory) -> Path:
    """One compile cache for this module's builds, so the Go runtime is compiled once."""
    return tmp_path_factory.mktemp("gocache")


def run_build(engine_dir: Path, gocache: Path, version: str, *, lock: bool = False) -> subprocess.Popen:
    """build.sh's `build` of a one-line program as hello@VERSION, in a shell of its own (holding the lock first)."""
    source = engine_dir.parent / f"hello-{version}"
    source.mkdir(exist_ok=True)
    (source / "go.mod").write_text("module example.test/hello\n\ngo 1.26\n")
    (source / "main.go").write_text(f'package main\n\nfunc main() {{ println("hello {version}") }}\n')
    script = (f'set -euo pipefail; . "{BUILD_SH}"; export GOCACHE="{gocache}" GOFLAGS=; mkdir -p "$SET/bin" "$LOGS"; '
              f'{"lock; " if lock else ""}build hello {version} "{source}" . "" ""')
    env = {**os.environ, "ENGINE_DIR": str(engine_dir), "PATH": f"{Path(GO).parent}:{os.environ['PATH']}"}
    return subprocess.Popen(["bash", "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def build(engine_dir: Path, gocache: Path, version: str) -> str:
    proc = run_build(engine_dir, gocache, version)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    return out


def hello(engine_dir: Path) -> str:
    binary = engine_dir / "sets" / cache.set_key() / "bin" / "hello"
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stderr.strip()


@needs_go
def test_a_second_build_builds_nothing_and_a_version_change_builds_only_itself(tmp_path, gocache):
    engine_dir = tmp_path / "engine"
    assert "hello v1: building" in build(engine_dir, gocache, "v1") and hello(engine_dir) == "hello v1"
    stamp = engine_dir / "builds" / "hello@v1" / "hello.sha256"
    before = stamp.stat().st_mtime_ns
    assert "hello v1: cached" in build(engine_dir, gocache, "v1") and stamp.stat().st_mtime_ns == before
    assert "hello v2: building" in build(engine_dir, gocache, "v2") and hello(engine_dir) == "hello v2"
    # The older build stays until no set links to it; the set now does not.
    assert (engine_dir / "builds" / "hello@v1" / "hello").exists()
    assert "hello v1: cached" in build(engine_dir, gocache, "v1") and hello(engine_dir) == "hello v1"


@needs_go
def test_a_corrupt_or_half_written_binary_is_built_again(tmp_path, gocache):
    engine_dir = tmp_path / "engine"
    build(engine_dir, gocache, "v1")
    binary = engine_dir / "builds" / "hello@v1" / "hello"
    binary.write_bytes(binary.read_bytes()[:4096])  # cut short, as a full disk or a kill leaves it
    assert "its checksum does not match its stamp: building it again" in build(engine_dir, gocache, "v1")
    assert hello(engine_dir) == "hello v1"
    (engine_dir / "builds" / "hello@v1" / "hello.sha256").unlink()  # killed between the binary and its stamp
    assert "hello v1: building" in build(engine_dir, gocache, "v1") and hello(engine_dir) == "hello v1"


@needs_go
def test_two_clones_building_at_once_build_once(tmp_path, gocache):
    engine_dir = tmp_path / "engine"
    first, second = (run_build(engine_dir, gocache, "v1", lock=True) for _ in range(2))
    outs = [proc.communicate(timeout=300)[0] for proc in (first, second)]
    assert [proc.returncode for proc in (first, second)] == [0, 0], outs
    assert sorted("hello v1: building" in out for out in outs) == [False, True], outs
    assert sum("hello v1: cached" in out for out in outs) == 1, outs
    assert hello(engine_dir) == "hello v1"


def test_sets_unused_for_their_days_go_and_then_the_builds_only_they_linked(tmp_path):
    """build.sh's prune: the disk stays bounded however often engine/versions.sh changes."""
    engine_dir = tmp_path / "engine"
    for key, build in (("old", "hello@v1"), ("recent", "hello@v2"), (cache.set_key(), "hello@v3")):
        (engine_dir / "sets" / key / "bin").mkdir(parents=True)
        (engine_dir / "builds" / build).mkdir(parents=True)
        (engine_dir / "builds" / build / "hello").write_text("")
        (engine_dir / "sets" / key / "bin" / "hello").symlink_to(f"../../../builds/{build}/hello")
    (engine_dir / "builds" / "hello@v0").mkdir()  # a build no set links to any more
    subprocess.run(["touch", "-d", "40 days ago", str(engine_dir / "sets" / "old")], check=True)
    subprocess.run(["touch", "-d", "10 days ago", str(engine_dir / "sets" / "recent")], check=True)
    done = subprocess.run(["bash", "-c", f'set -euo pipefail; . "{BUILD_SH}"; prune'], capture_output=True, text=True,
                          env={**os.environ, "ENGINE_DIR": str(engine_dir)})
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (engine_dir / "sets").iterdir()) == sorted(["recent", cache.set_key()])
    assert sorted(p.name for p in (engine_dir / "builds").iterdir()) == ["hello@v2", "hello@v3"]
    assert "removed hello@v1: no set uses it" in done.stdout and "removed hello@v0" in done.stdout
