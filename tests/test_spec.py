"""The committed stacks parse, defaults apply as documented, and the matrix says what the facts say."""
from __future__ import annotations

import json

import pytest

from components.config.base import label_key_problem, label_value_problem
from components.config.cluster import Validation
from components.config.compatibility import load_matrix
from components.config.config_source import spec_from_values
from components.config.hosts import Chip, NodeSpec, address
from components.config.images import Image
from components.config.packages import Kind, parse_file_name, versions_match
from components.config.redact import preview
from components.config.validation_images import catalogued_image, check_validation_images, job_image
from components.host.rollout import plan_waves
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT


def spec_of(stack: str):
    config = read_stack_config(ROOT, stack)
    return spec_from_values(config.values, config.secret_keys)


def test_dev_stack_is_two_910b_nodes_on_containerd():
    spec = spec_of("dev")
    assert [(n.chip.value, n.arch.value, n.container_runtime.value, n.npu_count) for n in spec.nodes] == \
        [("910B", "aarch64", "containerd", 8)] * 2
    assert spec.canaries == ("dev-npu-01",)
    assert spec.ssh.use_agent and spec.ssh_private_key is None


def test_prod_stack_pools_apply_and_secret_key_is_opaque():
    spec = spec_of("prod")
    assert len(spec.nodes) >= 32
    engines = {n.pool: n.container_runtime.value for n in spec.nodes}
    assert engines == {"train": "containerd", "infer": "docker"}
    assert {n.chip.value for n in spec.nodes if n.pool == "infer"} == {"310P"}
    assert spec.rollout.max_parallel == 8 and len(spec.canaries) == 2
    assert spec.ssh.bastion is not None and spec.ssh.bastion.port == 2222
    assert all(image.digest for image in (spec.device_plugin.image, spec.exporter.image,
                                          *spec.validation.images.values()))
    assert {chip: node for chip, (node, _) in spec.validation_jobs.items()} == {
        "910B": "train-01.prod.corp.example", "310P": "infer-01.prod.corp.example"}
    assert spec.ssh_private_key.startswith("[secret")


def test_no_stack_file_holds_a_secret_in_clear():
    for stack in ("dev", "prod"):
        text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
        assert "PRIVATE KEY" not in text
    assert "secure: v1:" in (ROOT / "Pulumi.prod.yaml").read_text()


@pytest.mark.parametrize("firmware, driver, cann, documented", [
    ("7.3.0.1.231", "24.1.rc2", "8.0.RC3", True),
    ("7.3.0.1.231", "24.1.RC2", "8.0.rc3", True),
    ("7.1.0.6.220", "24.1.rc1", "8.0.RC2", True),
    ("7.8.0.5.216", "25.5.0", "9.1.0", True),
    ("7.8.0.5.216", "25.0.rc1", "9.1.0", False),
    ("7.7.0.1.231", "25.0.rc1", "8.2.RC1", True),
    ("7.8.0.5.216", "25.5.0", "8.5.0", True),
    ("6.3.3", "23.0.rc3", "8.0.RC1", False),
    ("7.3.0.1.231", "24.1.rc2", "8.2.RC1", True),
    ("7.1.0.6.220", "24.1.rc1", "8.0.RC3", False),
    ("7.5.0.1.129", "26.0.rc1", "9.0.0", False),
])
def test_matrix_verdicts(firmware, driver, cann, documented):
    assert (load_matrix().problem(firmware, driver, cann) is None) is documented


@pytest.mark.parametrize("kind, name, expected", [
    (Kind.DRIVER, "Ascend-hdk-910b-npu-driver_24.1.rc2_linux-aarch64.run", ("910b", "24.1.rc2", "aarch64")),
    (Kind.DRIVER, "Ascend-hdk-310p-npu-driver_24.1.rc2_linux-x86-64.run", ("310p", "24.1.rc2", "x86_64")),
    (Kind.FIRMWARE, "Ascend-hdk-910b-npu-firmware_7.3.0.1.231.run", ("910b", "7.3.0.1.231", None)),
    (Kind.TOOLKIT, "Ascend-cann-toolkit_8.0.RC3_linux-x86_64.run", (None, "8.0.RC3", "x86_64")),
    (Kind.KERNELS, "Ascend-cann-kernels-910b_8.0.RC2_linux.run", ("910b", "8.0.RC2", None)),
    (Kind.KERNELS, "Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run", ("910b", "8.0.RC3", "aarch64")),
    (Kind.KERNELS, "Ascend-cann-910-ops_8.5.0_linux-aarch64.run", ("910", "8.5.0", "aarch64")),
    (Kind.DOCKER_RUNTIME, "Ascend-docker-runtime_6.0.RC3_linux-aarch64.run", (None, "6.0.RC3", "aarch64")),
    (Kind.DRIVER, "Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run", None),
])
def test_file_name_rules(kind, name, expected):
    found = parse_file_name(kind, name)
    assert (found and (found.get("chip"), found["version"], found.get("arch"))) == expected or \
        (found is None and expected is None)


def test_driver_file_may_carry_a_patch_number():
    assert versions_match("25.0.rc1", "25.0.rc1.1")
    assert not versions_match("25.0", "25.0.rc1")
    assert not versions_match("24.1.rc2", "24.1.rc21")


def _node(name, wave=None):
    return NodeSpec(name=name, address=name, host_key="k", pool=None, wave=wave, chip="910B", arch="aarch64",
                    npu_count=8, container_runtime="containerd")


def test_waves_put_canaries_first_then_numbered_waves_then_the_rest():
    nodes = tuple([_node("a"), _node("b", 2), _node("c", 1), _node("d"), _node("e"), _node("f", 1)])
    waves = plan_waves(nodes, ("d",), max_parallel=2)
    assert [[n.name for n in w] for w in waves] == [["d"], ["c", "f"], ["b"], ["a", "e"]]
    assert all(len(w) <= 2 for w in waves)


def test_prod_waves_respect_max_parallel(run_stack):
    resources = run_stack(ROOT / "Pulumi.prod.yaml", "prod")
    waves = next(r for r in resources if r.type == "pulumi:pulumi:Stack").outputs["waves"]
    assert waves[0] == ["train-01.prod.corp.example", "infer-01.prod.corp.example"]
    assert all(len(w) <= 8 for w in waves)
    assert sum(len(w) for w in waves) == 34 and len({n for w in waves for n in w}) == 34


@pytest.mark.parametrize("value, shown", [
    ("dev-npu-01", "'dev-npu-01'"),
    ("x" * 100, "'xxxxxxxxxxxxxxxx...' (100 characters)"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", None),
    ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM", None),
    ("ghp_R4nd0mT0k3nV4lu3F0rT3st1ng", None),
    ("https://deploy:pw@mirror.example/x", None),
    ("v1:Hk2b7Yw0Xq5mS1rT:3vQ8mLx1pZ7nK0cR5tY2w", None),
    ("Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u", None),
    ("e4fd14d4a269fc58b737821e010bbe5b9fd424775c81873311aaa3cb22bb5c27", "'e4fd14d4a269fc58...' (64 characters)"),
    ({"secure": "v1:abc"}, "a secure value (not shown)"),
    ([1, 2, 3], "a list of 3 item(s)"),
])
def test_previews_are_short_and_never_show_key_material(value, shown):
    text = preview(value)
    if shown is None:
        assert "not shown" in text and str(value)[8:20] not in text
    else:
        assert text == shown


@pytest.mark.parametrize("given, read", [("::ffff:10.0.0.1", "10.0.0.1"), ("fe80::1%eth0", "fe80::1%eth0"),
                                         ("NPU-01.Corp.Example", "npu-01.corp.example"),
                                         ("2001:db8::0:1", "2001:db8::1")])
def test_addresses_are_read_in_one_form_so_duplicates_show(given, read):
    assert address(given) == read


@pytest.mark.parametrize("given", ["fe80::1%$(reboot)", "fe80::1%eth0;id", "10.0.0.1%eth0", "root@10.0.0.1",
                                   "u:p@host.example", "10.0.0.1 # rack 4"])
def test_addresses_that_could_carry_a_command_or_a_login_are_refused(given):
    with pytest.raises(ValueError):
        address(given)


def test_label_rules_follow_kubernetes():
    assert label_value_problem("") is None and label_value_problem("prometheus-k8s.v2_0") is None
    assert label_value_problem("a" * 64) and label_value_problem("-a") and label_value_problem("a b")
    assert label_key_problem("app.kubernetes.io/name") is None and label_key_problem("app") is None
    assert label_key_problem("App_Kubernetes/name") and label_key_problem("/name") and label_key_problem("a/")


def test_each_chip_type_gets_a_canary_and_a_job_even_when_none_is_listed():
    config = read_stack_config(ROOT, "prod")
    rollout = {**json.loads(config.values["ascend-npu:rollout"]), "canaries": ["train-03.prod.corp.example"]}
    spec = spec_from_values({**config.values, "ascend-npu:rollout": json.dumps(rollout)}, config.secret_keys)
    assert spec.canaries == ("train-03.prod.corp.example", "infer-01.prod.corp.example")
    assert {chip: node for chip, (node, _) in spec.validation_jobs.items()} == {
        "910B": "train-03.prod.corp.example", "310P": "infer-01.prod.corp.example"}
    assert [n.name for n in plan_waves(spec.nodes, spec.canaries, 8)[0]] == list(spec.canaries)


def test_job_images_default_to_the_catalogued_cann_image_of_each_chip():
    """No image named: quay.io/ascend/cann, one tag per CANN and chip (a manifest list for both architectures)."""
    spec = spec_of("prod")
    assert catalogued_image("8.1.rc1", "310P").tag == "8.1.rc1-310p-ubuntu22.04-py3.10"
    assert catalogued_image("8.0.RC3", "910B") is None
    assert job_image({}, "8.1.RC1", "910B") == Image(repository="quay.io/ascend/cann",
                                                     tag="8.1.rc1-910b-ubuntu22.04-py3.10")
    assert job_image(spec.validation.images, "8.1.RC1", "310P") == spec.validation.images[Chip.A310P]
    unnamed = Validation()
    assert check_validation_images(unnamed, spec.nodes, spec.versions.model_copy(update={"cann": "8.2.RC1"})) == []
    [problem] = check_validation_images(unnamed, spec.nodes, spec.versions.model_copy(update={"cann": "8.0.0"}))
    assert problem.field == "validation.images.310P" and "310P images for CANN 8.1.RC1, 8.2.RC1, 8.5.0, 9.0.0" \
        in problem.message
    assert check_validation_images(Validation(enabled=False), spec.nodes, spec.versions) == []
