"""Release to release: the stack the release before this one installed, taken over by this one, then destroyed.

The project folder first holds that release's program (its own files, from this repository's history), then this
checkout's, as a checkout that pulls does. CHANGELOG.md names each release; world.py says what is simulated.
"""
from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from components.cluster.common.node_labels import READY
from engine.cache import REPO
from tests.e2e.conftest import SPENT
from tests.e2e.milestones import FIRST_THREE, config_at
from tests.e2e.world import NAMESPACE, STACK, World

# The release before this one: 0.1.0 (CHANGELOG.md), the program at the last commit before releases were numbered.
# From 0.2.0 on this names the previous release's tag's commit; bump it with each release.
PREVIOUS, PREVIOUS_RELEASE = "48a258d8fe5d30a3e92f64b4ac2083de7c75bb34", "0.1.0"
# What of the project the release's program is: the rest (Pulumi.yaml, the stack file, .venv) stays.
PROGRAM = ("components", "__main__.py")
KINDS = ("driver", "firmware", "toolkit", "kernels", "dockerRuntime")
# What 0.1.0 -> 0.2.0 changes on each node (CHANGELOG.md): the host runner's contract 2 rewrites the line of every
# host step, so each is updated once; verify's trigger moved to install's call, which makes it a replacement.
CHANGED = {"install": "update", "verify": "replace", "destroy": "update"}
# And each node's component gains the review a preview shows (its wave, packages with sums, drain): an update that
# runs nothing, a component having no provider (the engine gives a component's update no diff reasons).
REVIEWED = "review"
# What this release states of each node beside: the MindCluster release in its versions, the runtime its override keeps.
STATED = (REVIEWED, "versions", "compatibilityOverride")


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


def step_runs(world: World, step: str) -> dict[str, int]:
    """How many times STEP ran on each node: its first line in the node's run log, one per run."""
    counts = {}
    for name in FIRST_THREE:
        log = world.nodes[name].root / "var/log/ascend-npu/run.log"
        lines = log.read_text().splitlines() if log.exists() else []
        counts[name] = sum(1 for line in lines if f" [{step}] log on the node: " in line)
    return counts


def preview_ops(world: World) -> dict[str, tuple[str, tuple[str, ...]]]:
    """What `pulumi preview` would do to each resource but the stack: its op (a replacement's steps as `replace`) and
    the inputs that moved it."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for step in world.preview("--json").json()["steps"]:
        name, kind = step["urn"].rsplit("::", 1)[1], step["urn"].split("::")[2]
        if kind.endswith("pulumi:pulumi:Stack"):
            continue
        op = "replace" if step["op"] in ("replace", "create-replacement", "delete-replaced") else step["op"]
        reasons = tuple(sorted({*found.get(name, ("", ()))[1], *(step.get("diffReasons") or ())}))
        found[name] = (op, reasons)
    return found


def stored(world: World) -> dict[str, dict]:
    """The state's resources by URN."""
    state = json.loads(world.pulumi("stack", "export", "--stack", STACK, program=False).out)
    return {r["urn"]: r for r in state["deployment"].get("resources", [])}


def as_written_for(release: str, config: dict) -> dict:
    """The stack config as a user of RELEASE wrote it: 0.1.0 knew no MindCluster release set (versions.mindCluster,
    the override's dockerRuntime); CHANGELOG.md says what to add when moving to this release."""
    if release != "0.1.0":
        return config
    versions = {k: v for k, v in config["versions"].items() if k != "mindCluster"}
    if "compatibilityOverride" in versions:
        versions["compatibilityOverride"] = {k: v for k, v in versions["compatibilityOverride"].items()
                                             if k != "dockerRuntime"}
    return {**config, "versions": versions}


@pytest.mark.milestone("fresh", leaves=SPENT)
def test_the_release_before_installed_this_one_takes_over_reinstalling_nothing_and_a_destroy_uninstalls_all(
        world: World):
    config = {**config_at(world, "installed"), "rollout": {
        **config_at(world, "installed")["rollout"], "uninstallOnDestroy": True}}
    world.write_config(as_written_for(PREVIOUS_RELEASE, config))
    take(world, release_files(world.root, PREVIOUS))
    try:
        world.up()
    finally:
        take(world, REPO)
    world.write_config(config)  # what this release asks the stack to say: its MindCluster release
    installs, runs = world.install_counts(FIRST_THREE), step_runs(world, "install")
    assert all(installs.values()) and runs == {name: 1 for name in FIRST_THREE}, (installs, runs)
    before = stored(world)
    assert all("-m components.host.node_step " in r["inputs"]["create"] for r in before.values()
               if r["urn"].endswith("-install"))

    # What a reviewer sees in between: each node's install, verify and destroy record, their line rewritten in the
    # runner's contract 2, and its component's review, and nothing else: no drain, no label, no Kubernetes object, no
    # wave.
    ops = preview_ops(world)
    moved = {name: op for name, op in ops.items() if op[0] != "same"}
    expected = {f"ascend-npu-{node}-{step}": op for node in FIRST_THREE for step, op in CHANGED.items()}
    expected |= {f"ascend-npu-{node}": "update" for node in FIRST_THREE}
    assert {name: op for name, (op, _) in moved.items()} == expected, moved
    for node in FIRST_THREE:
        assert "create" in moved[f"ascend-npu-{node}-install"][1] and "delete" in moved[f"ascend-npu-{node}-destroy"][1]
    shown = [f"{name.removeprefix('ascend-npu-')} {op} ({', '.join(reasons)})"
             for name, (op, reasons) in sorted(moved.items())]
    print(f"e2e: preview from {PREVIOUS_RELEASE}: " + ", ".join(shown), flush=True)

    objects = {urn: r.get("modified", "") for urn, r in before.items() if r["type"].startswith("kubernetes:")}
    with Watch(world, FIRST_THREE) as watch:
        run = world.up()
    # Each node's install ran again (its inputs changed) and ran no installer; nothing was uninstalled, no node was
    # cordoned or lost its label, and no Kubernetes object was touched.
    assert world.install_counts(FIRST_THREE) == installs
    assert step_runs(world, "install") == {name: 2 for name in FIRST_THREE}
    assert all(world.uninstalls(name) == [] for name in FIRST_THREE)
    assert watch.samples > 10 and watch.seen == {name: set() for name in FIRST_THREE}, watch.seen
    assert "Traceback" not in run.out
    after = stored(world)
    assert {urn: after[urn].get("modified", "") for urn in objects} == objects
    assert all(" -m components.runner install --contract 2 " in r["inputs"]["create"] for r in after.values()
               if r["urn"].endswith("-install"))
    # Each node's component changed by its review and the MindCluster release its versions now state alone.
    components = [urn for urn, r in before.items() if r["type"] == "ascend-npu:index:AscendHost"]
    assert len(components) == len(FIRST_THREE) and all(
        {k: v for k, v in after[urn]["inputs"].items() if k not in STATED} ==
        {k: v for k, v in before[urn]["inputs"].items() if k not in STATED}
        and REVIEWED in after[urn]["inputs"] and after[urn]["inputs"]["versions"]["mindCluster"] == "6.0.0"
        for urn in components)

    # Nothing left to do: no step runs again, the installs above included.
    world.preview("--expect-no-changes")
    world.up()
    assert step_runs(world, "install") == {name: 2 for name in FIRST_THREE}

    # A destroy afterwards runs the deletes this release stored: every node uninstalled, its labels and objects gone.
    world.pulumi("destroy", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive", program=False)
    for name in FIRST_THREE:
        assert [kind for kind in KINDS if world.installed(name, kind)] == [], name
        assert world.uninstalls(name), name
        assert READY not in world.node_labels(name)
    assert list(world.kube.items(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets")) == []
    assert [urn for urn in stored(world) if "::pulumi:pulumi:Stack::" not in urn] == []
