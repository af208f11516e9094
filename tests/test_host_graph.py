"""The host layer on the recorded graph: steps in order per node, waves gated on the previous wave's verify."""
from __future__ import annotations

from collections import Counter

import pytest

from components.plan.recorder import SECRET_SIG, SIG_KEY, mask

from tests.stacks import ROOT

HOST = "ascend-npu:index:AscendHost"
COMMAND = "command:remote:Command"


@pytest.fixture(scope="module", params=["dev", "prod"])
def graph(request):
    from tests.conftest import run_stack_file
    resources = run_stack_file(ROOT / f"Pulumi.{request.param}.yaml", request.param)
    stack = next(r for r in resources if r.type == "pulumi:pulumi:Stack")
    return request.param, {r.urn: r for r in resources}, stack.outputs["waves"]


def step(resources, node: str, suffix: str):
    return next(r for r in resources.values() if r.name.endswith(f"-{node}-{suffix}"))


def test_each_node_runs_install_then_verify_then_gets_its_labels(graph):
    _, resources, waves = graph
    for node in (n for wave in waves for n in wave):
        install, verify = step(resources, node, "install"), step(resources, node, "verify")
        assert install.urn in verify.dependencies
        patch = next(r for r in resources.values() if r.type == "kubernetes:core/v1:NodePatch"
                     and r.properties["metadata"]["name"] == node)
        assert verify.urn in patch.dependencies
        assert resources[install.parent].type == HOST and install.parent == verify.parent


def test_upload_stacks_copy_packages_before_install(graph):
    stack, resources, waves = graph
    copies = [r for r in resources.values() if r.type == "command:remote:CopyToRemote"]
    if stack != "dev":
        assert copies == []
        return
    for node in (n for wave in waves for n in wave):
        copy = step(resources, node, "packages")
        assert copy.urn in step(resources, node, "install").dependencies
        assert copy.properties["remotePath"] == "/var/tmp"


def test_wave_k_plus_1_starts_only_after_every_node_of_wave_k_verified(graph):
    stack, resources, waves = graph
    first = "packages" if stack == "dev" else "install"
    for earlier, later in zip(waves, waves[1:]):
        gate = {step(resources, n, "verify").urn for n in earlier}
        for node in later:
            assert gate <= set(step(resources, node, first).dependencies), node
    for node in waves[0]:
        assert not any(d for d in step(resources, node, first).dependencies
                       if resources.get(d) and resources[d].type == COMMAND)


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
    # component + install + verify (+ package upload) on the host side, one NodePatch on the cluster side
    expected = 4 if stack == "dev" else 3
    assert set(per_node.values()) == {expected}


def test_connections_are_secret_pin_host_keys_and_never_leak_the_key(graph):
    stack, resources, _ = graph
    for r in resources.values():
        if r.type.startswith("command:remote:"):
            wrapped = r.properties["connection"]
            assert wrapped[SIG_KEY] == SECRET_SIG, "the whole connection is a secret in the state"
            conn = wrapped["value"]
            assert conn["hostKey"].startswith("ssh-ed25519 ")
            if stack == "prod":
                assert conn["proxy"]["hostKey"].startswith("ssh-ed25519 ") and conn["proxy"]["port"] == 2222
                assert conn["privateKey"].startswith("[secret")
            else:
                assert "privateKey" not in conn
            assert mask(r.properties)["connection"] == "[secret]"
            assert "PRIVATE KEY" not in r.properties.get("create", "")


def test_mirror_login_is_a_secret_on_the_install_stdin_only(tmp_path):
    from tests.conftest import run_stack_file
    from tests.stacks import load_stack, patched, write_stack
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:mirrorCredentials": {"secure": "v1:bWlycm9yLWxvZ2lu"}}})
    resources = {r.urn: r for r in run_stack_file(write_stack(stack, tmp_path), "case")}
    install = step(resources, "train-01.prod.corp.example", "install")
    verify = step(resources, "train-01.prod.corp.example", "verify")
    assert install.properties["stdin"][SIG_KEY] == SECRET_SIG
    assert install.properties["stdin"]["value"].startswith("ASCEND_MIRROR_CREDENTIALS='[secret")
    assert mask(install.properties)["stdin"] == "[secret]"
    assert "CREDENTIALS" not in install.properties["create"] and "@" not in install.properties["create"]
    assert isinstance(verify.properties["stdin"], str)


def test_plain_text_mirror_login_is_refused(tmp_path):
    from components.spec import SpecError
    from tests.conftest import run_stack_file
    from tests.stacks import load_stack, patched, write_stack
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:mirrorCredentials": "deploy:Plain-pass-91"}})
    with pytest.raises(SpecError) as caught:
        run_stack_file(write_stack(stack, tmp_path), "case")
    assert [p.field for p in caught.value.problems] == ["mirrorCredentials"]
    assert "Plain-pass-91" not in str(caught.value)
