"""A stack's first day through the real Pulumi CLI: preview with the pack, refusals before anything runs, up in waves,
a no-op up, the state's size. world.py says what is simulated; milestones.py, where each scenario starts."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from components.cluster.common.node_labels import ACCELERATOR, READY, RESOURCE_NAMES
from components.host.rollout import STEPS_AT_ONCE_PER_NODE
from components.kubeapi.client import wait_for
from components.plan.stack_plan import plan
from engine.pulumi_cli import versions
from tests.e2e.milestones import CANARY, SECOND, THIRD
from tests.e2e.sockets import Peak
from tests.e2e.world import NAMESPACE, STACK, World


def recorded_packages(resources: list[dict]) -> list[dict]:
    """Every package the planned nodes' reviews list."""
    return [package for r in resources if r["type"] == "ascend-npu:index:AscendHost"
            for package in r["inputs"]["review"]["packages"]]


def urn_names(steps: list[dict]) -> set[tuple[str, str]]:
    return {(step["urn"].split("::")[-2].split("$")[-1], step["urn"].split("::")[-1]) for step in steps}


@pytest.mark.milestone("fresh")
def test_the_cli_is_the_one_make_engine_built(world: World):
    run = world.pulumi("version", program=False)
    print(f"e2e: pulumi CLI {run.out.strip()}")
    assert run.out.strip() == versions()["PULUMI_VERSION"]


@pytest.mark.milestone("fresh")
def test_preview_runs_the_pack_and_agrees_with_the_offline_plan(world: World, pack: Path, tmp_path: Path):
    """Compared: the set of (type, name) of every step `pulumi preview --json` plans against every resource
    `make plan` records for the same stack file; and the pack's verdict, none violated on either side."""
    run = world.preview("--policy-pack", str(pack), "--json")
    assert [d for d in run.json()["diagnostics"] if d["severity"] == "error"] == []
    previewed = urn_names(run.json()["steps"])
    assert plan(STACK, tmp_path, world.stack_file, quiet=True) == 0
    recorded = json.loads((tmp_path / "resources.json").read_text())
    assert previewed == {(r["type"], r["name"]) for r in recorded}
    assert json.loads((tmp_path / "policy-report.json").read_text())["violations"] == []
    # `--json` leaves the pack's verdict out: the plain preview shows it, run as the pull-request check runs it.
    plain = world.preview("--policy-pack", str(pack), extra_env={"PULUMI_SKIP_CHECKPOINTS": "true"})
    assert f"✅ ascend-npu@v0.1.0 (local: {pack})" in plain.out, plain.out[-2000:]
    # What the reviewer reads of each node with --diff (preview.yml's diff: true), whole: its wave, and each
    # package it installs with its sum.
    diff = world.preview("--policy-pack", str(pack), "--diff", extra_env={"PULUMI_SKIP_CHECKPOINTS": "true"})
    assert re.search(r'wave\s*: "0 \(canary\)"', diff.out), diff.out[-3000:]
    for package in recorded_packages(recorded):
        assert re.search(rf'file\s*: "{re.escape(package["file"])}"', diff.out), package
        assert re.search(rf'sha256: "{package["sha256"]}"', diff.out), package


@pytest.mark.milestone("fresh")
def test_a_preview_that_cannot_reach_its_cluster_fails_with_one_line(world: World, pack: Path, tmp_path: Path):
    """The pull-request check as users run it, against a context the kubeconfig lacks, then a kubeconfig whose API
    server is gone (a port nothing listens on): each fails before anything is planned, naming the context and the
    kubeconfig; the kubernetes provider alone would have previewed green."""
    config = world.config()
    world.write_config({**config, "cluster": {**config["cluster"], "kubeContext": "lab-admin"}})
    try:
        run = world.preview("--policy-pack", str(pack), check=False)
    finally:
        world.write_config(config)
    [line] = [x.strip() for x in run.out.splitlines() if "cluster.kubeContext" in x]
    print(f"e2e: {line}")
    assert run.code != 0 and "context 'lab-admin' is not in" in line and world.plane.kubeconfig.name in line
    gone = tmp_path / "kubeconfig"
    gone.write_text(world.plane.kubeconfig.read_text().replace(world.kube.server, "https://127.0.0.1:9"))
    run = world.preview("--policy-pack", str(pack), check=False, extra_env={"KUBECONFIG": str(gone)})
    [line] = [x.strip() for x in run.out.splitlines() if "cluster.kubeContext" in x]
    print(f"e2e: {line}")
    assert run.code != 0 and f"KUBECONFIG={gone}" in line and "did not answer" in line
    # Refused before the program registered anything but the stack.
    assert "ascend-npu:index:AscendNpuPlatform" not in run.out and not any(map(world.install_starts, world.nodes))


@pytest.mark.milestone("fresh")
def test_an_extra_resource_that_breaks_a_mandatory_rule_blocks_up(world: World, pack: Path, tmp_path: Path):
    binding = {"type": "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "name": "e2e-admin",
               "properties": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                              "metadata": {"name": "e2e-admin"},
                              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                          "name": "cluster-admin"},
                              "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]}}
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump([binding]))
    assert plan(STACK, tmp_path / "plan", world.stack_file, quiet=True, extra=extra) != 0
    planned = {v["policy"] for v in json.loads((tmp_path / "plan" / "policy-report.json").read_text())
               ["violations"] if v["enforcementLevel"] == "mandatory"}
    run = world.up("--policy-pack", str(pack), check=False, extra_resources=extra)
    assert run.code != 0
    assert planned and all(name in run.out for name in planned), run.out[-3000:]
    assert world.kube.find("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/e2e-admin") is None
    assert all(not starts for starts in map(world.install_starts, world.nodes)), "up ran hosts despite the pack"


@pytest.mark.milestone("fresh", leaves="installed")
def test_up_installs_the_hosts_in_waves_then_deploys_the_cluster_layer(world: World, pack: Path, tmp_path: Path):
    """Run from a shell whose SSH_AUTH_SOCK names an agent that is gone, beside the stack's key: no step looks at it
    (each logs in through the run's agent, or its own), so nothing refuses it and nothing fails on it."""
    with Peak({"nodes": world.port}) as connections:
        world.up("--policy-pack", str(pack), extra_env={"SSH_AUTH_SOCK": str(tmp_path / "gone.sock")})
    # Each host step's ssh ends with it: one wave of one node holds at most its two steps that can overlap (its
    # destroy record beside its verify), never one per step run so far, and none is left once `up` ended.
    print(f"e2e: SSH connections to the nodes at once: at most {connections.most['nodes']} "
          f"({connections.samples} samples)")
    assert 1 <= connections.most["nodes"] <= STEPS_AT_ONCE_PER_NODE, connections.most
    assert connections.now("nodes") == 0
    starts = {name: world.install_starts(name) for name in (CANARY, SECOND, THIRD)}
    assert all(starts.values()), starts
    # maxParallel 1, canary first: each node's installers all ran before the next node's first.
    assert max(starts[CANARY]) < min(starts[SECOND]) and max(starts[SECOND]) < min(starts[THIRD])
    for name in (CANARY, SECOND, THIRD):
        assert world.node_labels(name).get(READY) == "true", world.node_labels(name)
    kube = world.kube
    assert sorted(n["metadata"]["name"] for n in kube.items("/api/v1/nodes")) == sorted(world.config_node_names())
    # The provider awaits each DaemonSet's rollout when it is created, over the nodes labelled by then; a node
    # labelled later gets its agents after that await, so `up` can end just before the last ones are ready.
    daemonsets = f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets"
    wanted = {"ascend-device-plugin-910b": 2, "ascend-device-plugin-310p": 1, "npu-exporter-containerd": 2,
              "npu-exporter-docker": 1}
    wait_for(f"DaemonSets ready: {wanted}", lambda: {
        ds["metadata"]["name"]: ds["status"].get("numberReady") for ds in kube.items(daemonsets)
        if ds["status"].get("numberReady") == ds["status"].get("desiredNumberScheduled")} == wanted, timeout=60)
    # One validation Job per chip, each on a canary of its chip: the 310P node joined the canaries unlisted.
    jobs = {job["metadata"]["labels"]["ascend-npu.io/chip"]: job
            for job in kube.items(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs")}
    assert set(jobs) == {"910B", "310P"} and all(job["status"].get("succeeded") == 1 for job in jobs.values())
    on = {chip: job["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.io/hostname"] for chip, job in jobs.items()}
    assert on == {"910B": CANARY, "310P": SECOND}


@pytest.mark.milestone("installed")
def test_each_chip_got_its_own_packages_and_its_resource(world: World):
    """The 310P node ran the 310p driver, firmware and kernels (the 910B ones on the others), verify read its
    eight chips from the 310P3 Duo `npu-smi info` layout, and the cluster sees it as a 310P node."""
    for name, chip in ((CANARY, "910b"), (SECOND, "310p"), (THIRD, "910b")):
        files = {call["kind"]: call["file"] for call in world.nodes[name].installer_calls()}
        assert all(f"-{chip}" in files[kind] for kind in ("driver", "firmware", "kernels")), (name, files)
        assert "-910b" not in files["toolkit"] and "-310p" not in files["toolkit"]
    outputs = json.loads(world.pulumi("stack", "output", "nodes", "--json", "--stack", STACK, program=False).out)
    chips = outputs[SECOND]["chips"]
    assert len(chips) == 8 and {chip["name"] for chip in chips} == {"310P3"}, chips
    assert [(chip["npu"], chip["chip"]) for chip in chips[:2]] == [(1, 0), (1, 1)], chips
    labels = world.node_labels(SECOND)
    assert labels.get(ACCELERATOR) == "huawei-Ascend310P", labels
    status = world.kube.get(f"/api/v1/nodes/{SECOND}")["status"]
    assert status["allocatable"].get(RESOURCE_NAMES["310P"]) == "8", status["allocatable"]


@pytest.mark.milestone("installed")
def test_a_second_up_changes_nothing(world: World):
    run = world.pulumi("preview", "--stack", STACK, "--non-interactive", "--expect-no-changes", check=False)
    assert run.code == 0, run.out[-3000:]


@pytest.mark.milestone("installed")
def test_the_key_is_stored_once_per_node_and_the_runs_agent_is_gone(world: World):
    """Only each node's destroy step keeps the stack's key (its delete runs without the program); install and verify
    took it from the run's agent, which ended with the run."""
    state = json.loads(world.pulumi("stack", "export", "--stack", STACK, program=False).out)
    holders = sorted(r["urn"].rsplit("::", 1)[1] for r in state["deployment"]["resources"]
                     if "stdin" in r.get("inputs", {}))
    assert holders == sorted(f"ascend-npu-{name}-destroy" for name in world.config_node_names()), holders
    for resource in state["deployment"]["resources"]:
        if resource["urn"].endswith(("-install", "-verify")):
            socket = resource["inputs"]["environment"]["SSH_AUTH_SOCK"]
            assert socket.startswith(".ascend-npu/agent/") and "stdin" not in resource["inputs"], resource["urn"]
    folder = world.project / ".ascend-npu" / "agent"
    assert not folder.exists() or list(folder.iterdir()) == []


@pytest.mark.milestone("installed")
def test_stack_export_bytes_per_node(world: World):
    """Printed: the whole state, each node's resources, and their stored inputs (at most 16 KB a node), in bytes of
    compact JSON, as the file backend writes the state (and as every checkpoint serializes it)."""
    run = world.pulumi("stack", "export", "--stack", STACK, program=False)
    state = json.loads(run.out)

    def size(value: object) -> int:
        return len(json.dumps(value, separators=(",", ":")))

    per_node: dict[str, int] = {}
    inputs: dict[str, int] = {}
    parts: dict[str, dict[str, int]] = {}  # by node, bytes by resource (its name without the node's) and stack traces
    for resource in state["deployment"]["resources"]:
        for name in world.config_node_names():
            if f"-{name}" in resource["urn"]:
                per_node[name] = per_node.get(name, 0) + size(resource)
                inputs[name] = inputs.get(name, 0) + size(resource.get("inputs", {}))
                part = resource["urn"].rsplit("::", 1)[1].replace(name, "<node>")
                parts.setdefault(name, {})[part] = size(resource)
                parts[name]["stack traces"] = parts[name].get("stack traces", 0) + size(resource.get("stackTrace", []))
    total = size(state)
    print(f"e2e: state {total} bytes; per node (whole / inputs): " +
          ", ".join(f"{n} {b} / {inputs[n]}" for n, b in sorted(per_node.items())))
    for name, sizes in sorted(parts.items()):
        print(f"e2e: {name} by resource: " + ", ".join(f"{part} {size}" for part, size in
                                                      sorted(sizes.items(), key=lambda item: -item[1])))
    assert per_node and all(size > 0 for size in per_node.values())
    assert max(inputs.values()) <= 16 * 1024, inputs
    assert not any("STEP=install" in json.dumps(r) for r in state["deployment"]["resources"])
    # What verify found is stored as the stack's `nodes` output, and in no component's outputs again.
    holders = [r["type"] for r in state["deployment"]["resources"] if "nodes" in r.get("outputs", {})]
    assert holders == ["pulumi:pulumi:Stack"], holders
