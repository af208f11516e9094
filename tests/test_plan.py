"""`make plan`: outputs, exit codes, a complete and deterministic record, secrets masked."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
import yaml

from components.cluster.all_objects import cluster_objects
from components.plan.recorder import MASK, SECRET_SIG, SIG_KEY, mask
from components.plan.stack_plan import EXIT_OK, EXIT_POLICY, plan, summary
from components.releases.catalog import known_releases, release_entry
from tests.stacks import ROOT, load_stack, patched, write_stack

OUTPUTS = ("resources.json", "policy-report.json", "graph.mmd")
NO_VIOLATIONS = {"pack": "ascend-npu", "policies": [], "violations": []}


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """Both committed stacks planned once for the module."""
    out = {}
    for stack in ("dev", "prod"):
        target = tmp_path_factory.mktemp(stack)
        printed = io.StringIO()
        with redirect_stdout(printed):
            code = plan(stack, target)
        out[stack] = (code, target, printed.getvalue())
    return out


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_writes_the_three_outputs_and_exits_0(planned, stack):
    code, target, printed = planned[stack]
    assert code == EXIT_OK
    for name in OUTPUTS:
        assert (target / name).stat().st_size > 0
    assert "wave 0 (canary)" in printed and "policy pack ascend-npu" in printed


def test_record_has_every_field_a_reviewer_needs(planned):
    resources = json.loads((planned["dev"][1] / "resources.json").read_text())
    for r in resources:
        assert {"urn", "type", "name", "parent", "dependencies", "inputs"} <= set(r)
    by_type = {r["type"]: r for r in resources}
    cluster = by_type["ascend-npu:index:AscendCluster"]
    namespace = by_type["kubernetes:core/v1:Namespace"]
    assert cluster["parent"] == by_type["ascend-npu:index:AscendNpuPlatform"]["urn"]
    assert namespace["parent"] == cluster["urn"] and namespace["name"].startswith(cluster["name"] + "-")
    assert namespace["inputs"]["metadata"]["name"] == "ascend-system"
    assert namespace["inputs"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_committed_stacks_pass_every_mandatory_rule(planned, stack):
    report = json.loads((planned[stack][1] / "policy-report.json").read_text())
    assert report["pack"] == "ascend-npu"
    assert {"image-pinning", "ssh-host-key-pinning", "npu-version-compatibility"} <= set(report["policies"])
    assert [v for v in report["violations"] if v["enforcementLevel"] == "mandatory"] == []


def test_graph_is_mermaid_with_components_as_boxes(planned):
    text = (planned["dev"][1] / "graph.mmd").read_text()
    assert text.startswith("flowchart LR") and "subgraph" in text
    assert "Namespace<br/>ascend-npu-cluster-namespace" in text


def test_two_runs_register_byte_identical_inputs(planned, tmp_path):
    with redirect_stdout(io.StringIO()):
        assert plan("prod", tmp_path) == EXIT_OK
    assert (tmp_path / "resources.json").read_bytes() == (planned["prod"][1] / "resources.json").read_bytes()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_writes_the_stacks_helm_values(planned, stack):
    values = yaml.safe_load((planned[stack][1] / "chart-values.yaml").read_text())
    assert values["clusterName"] == {"dev": "dev-ascend", "prod": "prod-ascend"}[stack]
    assert values["devicePlugin"]["chips"] == {"dev": ["910B"], "prod": ["910B", "310P"]}[stack]
    rendered_from = cluster_objects(values)
    resources = json.loads((planned[stack][1] / "resources.json").read_text())
    registered = {r["inputs"]["metadata"]["name"] for r in resources if r["type"] == "kubernetes:apps/v1:DaemonSet"}
    assert {o["metadata"]["name"] for o in rendered_from if o["kind"] == "DaemonSet"} == registered


def test_mandatory_violation_exits_1_naming_the_rule(tmp_path):
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = plan("dev", tmp_path, pack_dir=ROOT / "tests" / "fixtures" / "deny-namespaces")
    assert code == EXIT_POLICY
    assert "mandatory policies violated: no-namespaces" in err.getvalue()
    report = json.loads((tmp_path / "policy-report.json").read_text())
    last_lines = [v["message"].splitlines()[-1] for v in report["violations"]]
    assert last_lines == ["namespace ascend-system is not allowed here"]


def test_every_canary_is_marked_in_the_printed_rollout():
    waves = [["train-01"], ["infer-01"], ["train-02", "train-03"], ["infer-02", "late-canary"]]
    printed = summary("s", [], NO_VIOLATIONS, waves, canaries=("train-01", "infer-01", "late-canary"))
    assert "  wave 0 (canary): train-01" in printed and "  wave 1 (canary): infer-01" in printed
    assert "  wave 2: train-02, train-03" in printed
    assert "  wave 3: infer-02, late-canary (canary)" in printed


def test_a_long_wave_of_canaries_is_marked_though_its_names_are_cut():
    wave = [f"n{i}" for i in range(9)]
    printed = summary("s", [], NO_VIOLATIONS, [wave], canaries=wave)
    assert "  wave 0 (canary): n0, n1, n2, n3, n4, n5 ... (+3)" in printed


def test_mask_hides_secrets_and_unknowns():
    wire = {"a": {SIG_KEY: SECRET_SIG, "value": "-----BEGIN KEY-----"}, "b": ["04da6b54-80e4-46f7-96ec-b56ff0331ba9"]}
    assert mask(wire) == {"a": MASK, "b": ["[unknown]"]}


def test_secure_value_never_reaches_the_outputs(planned):
    text = "".join((planned["prod"][1] / name).read_text() for name in OUTPUTS)
    assert "v1:Hk2b7Yw0Xq5mS1rT" not in text and "[secret: decrypted" not in text


def test_make_plan_runs_as_the_readme_says():
    result = subprocess.run(["make", "-s", "plan"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "stack dev:" in result.stdout and (ROOT / "build" / "dev" / "resources.json").exists()


def test_plan_exits_with_every_event_loop_closed(tmp_path):
    """No event loop is left for the collector, whose finalizers could print `Exception ignored ... -1` at exit."""
    # That symptom is rare and racy; ResourceWarning names every unclosed loop on every run, so one left open fails.
    for run in range(3):
        result = subprocess.run([sys.executable, "-W", "default::ResourceWarning", "-m", "components.plan",
                                 "--stack", "dev", "--out", str(tmp_path / f"out-{run}")],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == EXIT_OK, result.stderr
        assert "Exception ignored" not in result.stderr and "unclosed event loop" not in result.stderr, result.stderr


def test_resource_names_do_not_follow_the_cluster_name_and_older_stacks_are_aliased(planned):
    """Renaming `cluster.name` must not give every resource a new URN (on the real engine each Kubernetes object
    was then created again before its old twin, with the same Kubernetes name, was deleted)."""
    from components.config import parse_stack
    from components.platform import ROOT_NAME, root_aliases
    from tests.stacks import load_stack

    recorded = json.loads((planned["dev"][1] / "resources.json").read_text())
    assert all(r["name"].startswith(f"{ROOT_NAME}-") for r in recorded if r["type"] != "pulumi:pulumi:Stack"
               and r["name"] != ROOT_NAME)
    raw = {k.split(":", 1)[1]: v for k, v in load_stack("dev")["config"].items()}
    assert [a.name for a in root_aliases(parse_stack(raw))] == ["dev-ascend"]
    assert root_aliases(parse_stack({**raw, "cluster": {**raw["cluster"], "name": ROOT_NAME}})) == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_node_stores_at_most_16_kb_of_inputs_and_no_script(planned, stack):
    """The engine rewrites the state at each step of an `up`: per node it holds hashes, not the ~100 KB of scripts;
    no command sends its previous output as SSH env requests, and none but a mirror login reads stdin."""
    resources = json.loads((planned[stack][1] / "resources.json").read_text())
    nodes = [r["inputs"]["node"] for r in resources if r["type"] == "ascend-npu:index:AscendHost"]
    per_node = {node: sum(len(json.dumps(r["inputs"])) for r in resources if r["name"].endswith(
        tuple(f"-{node}{suffix}" for suffix in ("", "-install", "-verify", "-on-destroy", "-scripts", "-packages"))))
        for node in nodes}
    assert nodes and max(per_node.values()) <= 16 * 1024, per_node
    commands = [r["inputs"] for r in resources if r["type"] == "command:remote:Command"]
    assert commands and all(c["addPreviousOutputInEnv"] is False and "stdin" not in c for c in commands)
    assert not any("STEP=install" in json.dumps(c) for c in commands)  # the scripts travel by copy, not inputs


RELEASE_CASES = [(plugin, exporter, False) for plugin in known_releases("device-plugin")
                 for exporter in known_releases("npu-exporter")]
RELEASE_CASES += [(plugin, plugin, True) for plugin in known_releases("device-plugin")]


def _kept(tag: str, prod_release: str) -> dict:
    """The releaseOverride an agent of another MindCluster release than prod's needs, or nothing."""
    return {} if tag == prod_release else {"releaseOverride": {
        "tag": tag, "release": tag, "reason": "kept on another MindCluster release on purpose, OPS-5121"}}


@pytest.mark.parametrize("plugin,exporter,volcano", RELEASE_CASES)
def test_every_catalogued_release_plans_clean_through_the_pack(tmp_path, plugin, exporter, volcano):
    """prod (910B and 310P, containerd and Docker) moved to each catalogued release by its image tags, an agent off
    prod's MindCluster release (26.1.0) kept by its releaseOverride."""
    config = load_stack("prod")["config"]
    agents = {key: {**config[f"ascend-npu:{key}"], "image": {**config[f"ascend-npu:{key}"]["image"], "tag": tag},
                    **_kept(tag, "v26.1.0")}
              for key, tag in (("devicePlugin", plugin), ("exporter", exporter))}
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:devicePlugin": {**agents["devicePlugin"],
                                                                             "volcano": volcano},
                                                 "ascend-npu:exporter": agents["exporter"]}})
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = plan("release", tmp_path, write_stack(stack, tmp_path, "release"))
    report = json.loads((tmp_path / "policy-report.json").read_text())
    assert [v["message"] for v in report["violations"]] == [] and code == EXIT_OK
    roles = {r["inputs"]["metadata"]["name"]: r["inputs"] for r in json.loads((tmp_path / "resources.json").read_text())
             if r["type"] == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"}
    proxy = [rule for rule in roles["ascend-npu-device-plugin"]["rules"] if "nodes/proxy" in rule["resources"]]
    defined = [rule.manifest() for rule in release_entry("device-plugin", plugin).rbac.cluster
               if "nodes/proxy" in rule.resources]
    assert proxy == defined  # granted exactly where the release needs it, and allowed by that release only
