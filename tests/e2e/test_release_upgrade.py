"""A stack the release before this one installed, taken over by this one: the project folder first holds that
release's program (its own files, from this repository's history), then this one, as a checkout that pulls does.
world.py says what is simulated; milestones.py, where each scenario starts."""
from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from components.cluster.common.node_labels import READY
from engine.cache import REPO
from tests.e2e.milestones import FIRST_THREE
from tests.e2e.world import STACK, World

# The release before this one: the last commit of main that landed. Bump it with each release.
PREVIOUS = "c24ca6fd805f79244201ea2a87723ff5f250a67f"
# What of the project the release's program is: the rest (Pulumi.yaml, the stack file, .venv) stays.
PROGRAM = ("components", "__main__.py")


def release_files(root: Path, commit: str) -> Path:
    """COMMIT's tree (its program reads files beside its components: policies/model, the release catalog), taken
    from this repository's history into a folder of its own."""
    folder = root / f"release-{commit[:12]}"
    if not folder.exists():
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit], capture_output=True)
        if archive.returncode != 0:
            raise AssertionError(f"release {commit} is not in this clone's history (a shallow clone?): "
                                 f"{archive.stderr.decode().strip()}; clone with full history")
        folder.mkdir()
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def take(world: World, source: Path) -> None:
    """The project's program is SOURCE's from now on."""
    for name in PROGRAM:
        link = world.project / name
        link.unlink()
        link.symlink_to(source / name)


class Watch:
    """Samples every node while `pulumi up` runs: whether it ever lost its ready label or was cordoned."""

    def __init__(self, world: World, names: tuple[str, ...]):
        self.world, self.names = world, names
        self.seen: dict[str, set[str]] = {name: set() for name in names}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            for name in self.names:
                node = self.world.node_object(name)
                if node["metadata"].get("labels", {}).get(READY) != "true":
                    self.seen[name].add("not labelled ready")
                if node["spec"].get("unschedulable"):
                    self.seen[name].add("cordoned")
            self.samples += 1

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.mark.milestone("fresh", leaves="installed")
def test_the_release_before_installed_and_this_one_takes_over_without_running_an_installer_or_cordoning(world: World):
    take(world, release_files(world.root, PREVIOUS))
    try:
        world.up()
    finally:
        take(world, REPO)
    installs = world.install_counts(FIRST_THREE)
    assert all(installs.values()), installs
    assert all("take()" in text and "$ASCEND_NPU_RUN_STEP" not in text for text in stored_installs(world))
    objects = kubernetes_objects(world)
    with Watch(world, FIRST_THREE) as watch:
        run = world.up()
    # Each node's install, verify and destroy record run again (their stored command changed form) and change
    # nothing: no installer started, no node cordoned. Its labels move from the release before's NodePatch to the
    # label step, which applies them before the NodePatch's delete releases its own hold: never off for a moment.
    assert world.install_counts(FIRST_THREE) == installs
    assert watch.samples > 10 and watch.seen == {name: set() for name in FIRST_THREE}, watch.seen
    assert "Traceback" not in run.out
    assert all('bash -c "$ASCEND_NPU_RUN_STEP"' in text for text in stored_installs(world))
    # The cluster layer's objects, which the release before registered through pulumi_kubernetes's typed classes
    # and this one by their type token, are left as they were: not one updated, replaced or created again.
    after = kubernetes_objects(world)
    assert objects and {urn: after.get(urn) for urn in objects} == objects, after
    world.preview("--expect-no-changes")


def kubernetes_objects(world: World) -> dict[str, str]:
    """The state's Kubernetes objects (not the release before's NodePatches) and when each was last changed."""
    state = json.loads(world.pulumi("stack", "export", "--stack", STACK, program=False).out)
    return {r["urn"]: r.get("modified", "") for r in state["deployment"]["resources"]
            if r["type"].startswith("kubernetes:") and r["type"] != "kubernetes:core/v1:NodePatch"}


def stored_installs(world: World) -> list[str]:
    """The command each node's install step holds in the state, as the release that last ran it stored it."""
    state = json.loads(world.pulumi("stack", "export", "--stack", STACK, program=False).out)
    held = [r["inputs"]["environment"]["ASCEND_NPU_ON_NODE"] for r in state["deployment"]["resources"]
            if r["urn"].endswith("-install")]
    assert len(held) == len(FIRST_THREE), held
    return held
