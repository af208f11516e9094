"""Where `make engine` keeps what it builds: one cache per machine, shared by every clone (engine/build.sh)."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VERSIONS = REPO / "engine" / "versions.sh"
BINARIES = ("pulumi", "pulumi-resource-kubernetes", "etcd", "kube-apiserver", "kube-controller-manager",
            "kube-scheduler", "kwok")


def engine_dir(environ: dict[str, str] | None = None) -> Path:
    """$ENGINE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/ascend-npu/engine, as build.sh reads them."""
    env = os.environ if environ is None else environ
    if env.get("ENGINE_DIR"):
        return Path(env["ENGINE_DIR"])
    cache = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "ascend-npu" / "engine"


def set_key(versions: Path = VERSIONS) -> str:
    """The key of the binaries engine/versions.sh names: the start of that file's sha256, as build.sh computes it."""
    return hashlib.sha256(versions.read_bytes()).hexdigest()[:16]


ENGINE_DIR = engine_dir()
SET = ENGINE_DIR / "sets" / set_key()
BIN = SET / "bin"
# The plugin cache of this set's CLI; the registered command stand-in finds the clone that runs it by
# ASCEND_NPU_REPO (engine/pulumi_cli.cli_env), so clones share it without one's venv serving another.
PULUMI_HOME = SET / "pulumi-home"
KWOK_STAGES = SET / "kwok-stage"


def build_problems(set_dir: Path = SET) -> list[str]:
    """What keeps a set from running: binaries not built, or not matching the checksum stamped at build time."""
    problems = []
    for name in BINARIES:
        binary = set_dir / "bin" / name
        if not binary.exists():
            problems.append(f"{name} not in {binary.parent}")
            continue
        stamp = binary.resolve().parent / f"{name}.sha256"
        if not stamp.exists() or stamp.read_text().split()[0] != file_sha256(binary):
            problems.append(f"{name} does not match its checksum ({stamp})")
    if not (set_dir / "kwok-stage" / ".complete").exists():
        problems.append(f"kwok's stage definitions not in {set_dir / 'kwok-stage'}")
    return problems


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """The cache's lock, the one build.sh holds: one clone at a time builds or registers plugins."""
    ENGINE_DIR.mkdir(parents=True, exist_ok=True)
    with open(ENGINE_DIR / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
