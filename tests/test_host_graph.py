"""The host layer on the recorded graph: steps in order per node, waves gated on the previous wave's last step."""
from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path

import pytest

from components.cluster.values_contract import chart_values
from components.config.config_source import spec_from_values
from components.host.commands import node_packages
from components.host.rollout import plan_waves
from components.host.script_set import step_sha256
from components.plan.recorder import SECRET_SIG, SIG_KEY, mask
from components.plan.stack_files import read_stack_config
from components.runner.contract import MODULE, ON_NODE, parse_line
from components.runner.on_node import parse as parse_on_node
from components.runner.staging import needed
from tests.stacks import ROOT, load_stack, patched, write_stack

HOST = "ascend-npu:index:AscendHost"
WAVE = "pulumi:index:Stash"
COMMAND = "command:remote:Command"
LOCAL = "command:local:Command"


@pytest.fixture(scope="module", params=["dev", "prod"])
def graph(request):
    from tests.conftest import run_stack_file
    resources = run_stack_file(ROOT / f"Pulumi.{request.param}.yaml", request.param)
    stack = next(r for r in resources if r.type == "pulumi:pulumi:Stack")
    return request.param, {r.urn: r for r in resources}, stack.outputs["waves"]


def load_spec(stack: str):
    config = read_stack_config(ROOT, stack, ROOT / f"Pulumi.{stack}.yaml")
    return spec_from_values(config.values, config.secret_keys)


def step(resources, node: str, suffix: str):
    return next(r for r in resources.values() if r.name.endswith(f"-{node}-{suffix}"))


def wave_closed(resources, index: int):
    """The resource that closes wave INDEX: what the next wave's first steps wait for."""
    return next(r for r in resources.values() if r.type == WAVE and r.name == f"ascend-npu-wave-{index}")


def label_steps(resources) -> dict:
    """Each node's label step (the cluster layer's local command of components/labels), by node."""
    steps = {}
    for r in resources.values():
        words = shlex.split(r.properties.get("create") or "") if r.type == LOCAL else []
        if "components.labels" in words:
            steps[words[words.index("--node") + 1]] = r
    return steps


# Many-wave and reordered variants of the committed stacks: every node its own wave, numbered waves split by
# maxParallel, and a validation canary that is not in the first wave.
VARIANTS = {
    "dev": ("dev", {}),
    "prod": ("prod", {}),
    "prod-one-by-one": ("prod", {"set": {"ascend-npu:rollout.maxParallel": 1}}),
    "prod-numbered": ("prod", {"set": {"ascend-npu:rollout.maxParallel": 3, "ascend-npu:nodes[5].wave": 1,
                                       "ascend-npu:nodes[6].wave": 1, "ascend-npu:nodes[30].wave": 1,
                                       "ascend-npu:nodes[31].wave": 1, "ascend-npu:nodes[7].wave": 2}}),
    "dev-late-canary": ("dev", {"set": {"ascend-npu:rollout.canaries": ["dev-npu-02", "dev-npu-01"]}}),
    # A 310P canary nobody listed: the first 310P node joins the canaries, its chip's Job follows its labels.
    "prod-910b-canary-only": ("prod", {"set": {"ascend-npu:rollout.canaries": ["train-02.prod.corp.example"]}}),
}


def expected_host_edges(spec, resources) -> set[tuple[str, str]]:
    """Every edge that touches a host step or a node's labels, derived from the spec alone."""
    patches = {node: r.urn for node, r in label_steps(resources).items()}
    edges, previous = set(), []
    drains = spec.rollout.drain.enabled
    last = "uncordon" if drains else "verify"
    for index, wave in enumerate(plan_waves(spec.nodes, spec.canaries, spec.rollout.max_parallel)):
        for node in (n.name for n in wave):
            first = ["drain"] if drains else []
            urn = {s: step(resources, node, s).urn for s in first + ["install", "verify", "destroy",
                                                                      "on-destroy"] + (["uncordon"] if drains else [])}
            # The wave's gate on its first step only: the install waits for it through the drain.
            edges |= {(urn[s], gate) for s in (first or ["install"]) for gate in previous}
            edges |= {(urn["install"], urn[s]) for s in first}
            edges |= {(urn["verify"], urn["install"]), (urn["destroy"], urn["install"]),
                      (urn["on-destroy"], urn["destroy"]), (patches[node], urn[last])}
            if drains:  # uncordon after verify, and (deleted first) before on-destroy's uninstall
                edges |= {(urn["uncordon"], urn["verify"]), (urn["uncordon"], urn["on-destroy"])}
        closed = [r.urn for r in resources.values() if r.type == WAVE and r.name == f"ascend-npu-wave-{index}"]
        # Closed on every last step of the wave; the next wave waits for that alone.
        edges |= {(wave_urn, step(resources, n.name, last).urn) for wave_urn in closed for n in wave}
        previous = closed
    jobs = chart_values(spec)["validation"]["jobs"]
    for job in (r for r in resources.values() if r.type == "kubernetes:batch/v1:Job"):
        edges.add((job.urn, patches[jobs[job.properties["metadata"]["labels"]["ascend-npu.io/chip"]]["node"]]))
    return edges


@pytest.mark.parametrize("variant", VARIANTS)
def test_recorded_host_edges_are_exactly_the_rollout(variant, tmp_path):
    """No edge lost (a wave starting early) and none added (a node waiting for the wrong one)."""
    from tests.conftest import run_stack_file
    stack, patch = VARIANTS[variant]
    path = write_stack(patched(load_stack(stack), patch), tmp_path, stack)
    config = read_stack_config(ROOT, stack, path)
    resources = {r.urn: r for r in run_stack_file(path, stack)}
    held = {urn for urn, r in resources.items() if r.type in (COMMAND, LOCAL, WAVE)}
    recorded = {(r.urn, d) for r in resources.values() for d in r.dependencies if r.urn in held or d in held}
    expected = expected_host_edges(spec_from_values(config.values, config.secret_keys), resources)
    assert recorded == expected, {"lost": sorted(expected - recorded), "added": sorted(recorded - expected)}


def test_each_node_runs_install_then_verify_then_gets_its_labels(graph):
    _, resources, waves = graph
    for node in (n for wave in waves for n in wave):
        install, verify = step(resources, node, "install"), step(resources, node, "verify")
        assert install.urn in verify.dependencies
        patch = label_steps(resources)[node]
        uncordon = step(resources, node, "uncordon")
        assert verify.urn in uncordon.dependencies and uncordon.urn in patch.dependencies
        assert resources[install.parent].type == HOST and install.parent == verify.parent


def test_every_host_step_is_a_local_ssh_run_that_stages_what_it_needs(graph):
    """Each step's ssh ends with it (no connection held until `up` ends); the command it runs on the node is in its
    environment, and names the scripts it takes by SHA-256 and (with source upload) exactly the node's installers."""
    stack, resources, waves = graph
    assert not [r for r in resources.values() if r.type == "command:remote:CopyToRemote"]
    spec = load_spec(stack)
    nodes = {n.name: n for n in spec.nodes}
    for node in (n for wave in waves for n in wave):
        for name, scripts in (("install", ["install"]), ("verify", ["verify"]),
                              ("destroy", ["on_destroy", "uninstall"])):
            command = step(resources, node, name)
            assert command.type == LOCAL and command.properties["addPreviousOutputInEnv"] is False
            words = shlex.split(command.properties["create"])
            assert words[1:4] == ['${ASCEND_NPU_PYTHON:-.venv/bin/python}', "-m", MODULE]
            call = parse_line(command.properties["create"])
            assert call.target.host_key == nodes[node].host_key and call.node == node
            assert "PRIVATE KEY" not in json.dumps(command.properties["environment"])
            files = needed(parse_on_node(command.properties["environment"][ON_NODE]), upload=call.upload)
            assert [(f.remote.rsplit("/", 1)[1], f.sha256) for f in files if f.remote.endswith(".sh")] == \
                [(f"{s}.sh", step_sha256(s)) for s in scripts]
            runs = sorted(Path(f.path).name for f in files if f.path.endswith(".run"))
            if stack == "dev" and name == "install":
                assert runs == sorted(p.file for p in node_packages(spec, nodes[node])) and len(runs) == 5
            else:
                assert runs == []
        # The node's destroy: the record step's delete, over ssh like every step, naming the node alone.
        destroy = parse_line(step(resources, node, "destroy").properties["delete"])
        assert (destroy.step, destroy.node, destroy.target.host_key) == ("destroy", node, nodes[node].host_key)
        # Earlier releases' remote destroy: no command left to run, no key, nothing to dial with.
        legacy = step(resources, node, "on-destroy")
        assert legacy.type == COMMAND and legacy.properties.get("create") is None
        assert legacy.properties.get("delete") is None
        assert "privateKey" not in legacy.properties["connection"]["value"]
        assert "proxy" not in legacy.properties["connection"]["value"]


def test_wave_k_plus_1_starts_only_after_every_node_of_wave_k_verified_and_uncordoned(graph):
    stack, resources, waves = graph
    for index, (earlier, later) in enumerate(zip(waves, waves[1:])):
        closed = wave_closed(resources, index)
        assert set(closed.dependencies) == {step(resources, n, "uncordon").urn for n in earlier}
        assert closed.properties["input"] == earlier
        for node in later:  # no node of wave k+1 is cordoned while one of wave k still is
            assert step(resources, node, "drain").dependencies == [closed.urn], node
    # The last wave closes nothing.
    assert not [r for r in resources.values() if r.type == WAVE and r.name == f"ascend-npu-wave-{len(waves) - 1}"]
    for node in waves[0]:
        drain = step(resources, node, "drain")
        assert not any(d for d in drain.dependencies if resources.get(d) and resources[d].type in (COMMAND, LOCAL))
    for node in (n for wave in waves for n in wave):  # and through its drain, no install before it either
        assert step(resources, node, "install").dependencies == [step(resources, node, "drain").urn], node


def test_waves_hold_canaries_first_and_at_most_max_parallel(graph):
    stack, _, waves = graph
    limit = {"dev": 1, "prod": 8}[stack]
    assert all(0 < len(w) <= limit for w in waves)
    canaries = {"dev": ["dev-npu-01"], "prod": ["train-01.prod.corp.example", "infer-01.prod.corp.example"]}[stack]
    assert waves[0] == canaries


def test_cost_per_node(graph):
    stack, resources, waves = graph
    per_node = Counter()
    for r in resources.values():
        if r.type == HOST:
            per_node[r.name] += 1
        elif r.parent and resources[r.parent].type == HOST:
            per_node[resources[r.parent].name] += 1
    nodes = sum(len(w) for w in waves)
    assert len(per_node) == nodes
    # component, drain, install, verify, destroy, on-destroy, uncordon on the host side; the label step is the
    # cluster layer's
    assert set(per_node.values()) == {7}


def test_connections_are_secret_pin_host_keys_and_never_leak_the_key(graph):
    """The key is in the state once per node, on the destroy step's stdin, a secret (its delete runs without the
    program); every other ssh step takes it from the run's agent; the remote command left carries no key at all."""
    stack, resources, _ = graph
    for r in resources.values():
        if r.type.startswith("command:remote:"):
            wrapped = r.properties["connection"]
            assert wrapped[SIG_KEY] == SECRET_SIG, "the whole connection is a secret in the state"
            conn = wrapped["value"]
            assert conn["hostKey"].startswith("ssh-ed25519 ") and "privateKey" not in conn and "proxy" not in conn
            assert mask(r.properties)["connection"] == "[secret]"
        elif r.type == LOCAL and f" -m {MODULE} " in r.properties["create"]:
            call = parse_line(r.properties["create"])
            assert call.target.host_key.startswith("ssh-ed25519 ")
            shown = r.properties["create"] + json.dumps(r.properties.get("environment", {}))
            assert "PRIVATE KEY" not in shown
            if stack == "prod" and r.name.endswith("-destroy"):
                assert r.properties["stdin"][SIG_KEY] == SECRET_SIG and mask(r.properties)["stdin"] == "[secret]"
                assert sorted(json.loads(r.properties["stdin"]["value"])) == ["key"]
                assert "SSH_AUTH_SOCK" not in r.properties["environment"]
            elif stack == "prod":
                assert "stdin" not in r.properties
                assert r.properties["environment"]["SSH_AUTH_SOCK"].startswith(".ascend-npu/agent/")
            else:
                assert "stdin" not in r.properties and "SSH_AUTH_SOCK" not in r.properties["environment"]
            if stack == "prod":
                assert call.bastion is not None and call.bastion.host_key.startswith("ssh-ed25519 ")
                assert call.bastion.port == 2222


def test_every_command_streams_its_output_to_up(graph):
    """pulumi-command sends each output line to `up` as it comes unless `logging` says otherwise (v1.2.1
    remote/logging.go: unset logs both streams)."""
    _, resources, _ = graph
    commands = [r for r in resources.values() if r.type in (COMMAND, LOCAL)]
    assert commands and all(r.properties.get("logging", "stdoutAndStderr") == "stdoutAndStderr" for r in commands)


def test_mirror_login_is_a_secret_on_the_install_stdin_only(tmp_path):
    from tests.conftest import run_stack_file
    from tests.stacks import load_stack, patched, seal, write_stack
    prod = load_stack("prod")
    login = {"secure": seal("deploy:mirror-password", prod["encryptionsalt"])}
    stack = patched(prod, {"set": {"ascend-npu:mirrorCredentials": login}})
    resources = {r.urn: r for r in run_stack_file(write_stack(stack, tmp_path), "case")}
    node = "train-01.prod.corp.example"
    install = step(resources, node, "install")
    assert install.properties["stdin"][SIG_KEY] == SECRET_SIG
    assert mask(install.properties)["stdin"] == "[secret]"
    on_node = install.properties["environment"][ON_NODE]
    assert "ASCEND_MIRROR_LOGIN=stdin" in on_node
    assert "CREDENTIALS" not in on_node + install.properties["create"] and "@" not in on_node
    # What each step's runner reads: the login for the install step alone, and the stack's key for the destroy step
    # alone (the plan holds placeholders for the secrets' values).
    assert sorted(json.loads(install.properties["stdin"]["value"])) == ["stdin"]
    destroy = step(resources, node, "destroy").properties["stdin"]
    assert destroy[SIG_KEY] == SECRET_SIG and sorted(json.loads(destroy["value"])) == ["key"]
    assert "stdin" not in step(resources, node, "verify").properties
    assert "stdin" not in step(resources, node, "on-destroy").properties


def test_plain_text_mirror_login_is_refused(tmp_path):
    from components.config import SpecError
    from tests.conftest import run_stack_file
    from tests.stacks import load_stack, patched, write_stack
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:mirrorCredentials": "deploy:Plain-pass-91"}})
    with pytest.raises(SpecError) as caught:
        run_stack_file(write_stack(stack, tmp_path), "case")
    assert [p.field for p in caught.value.problems] == ["mirrorCredentials"]
    assert "Plain-pass-91" not in str(caught.value)
