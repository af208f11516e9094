"""The NPU network in the planned graph: a step only where a node has one, after install and any reboot wait, before
verify; a changed address changes that node's step alone."""
from __future__ import annotations

import yaml

from tests.stacks import ROOT, load_stack, patched, write_stack

FIXTURE = ROOT / "tests/bad_configs/accepted/npu-network-from-the-pool.yaml"
TRAIN_01, TRAIN_02 = "train-01.prod.corp.example", "train-02.prod.corp.example"


def planned(tmp_path, extra: dict | None = None, name: str = "prod"):
    from tests.conftest import run_stack_file
    patch = yaml.safe_load(FIXTURE.read_text())
    patch["set"].update(extra or {})
    folder = tmp_path / name
    folder.mkdir()
    return {r.name: r for r in run_stack_file(write_stack(patched(load_stack("prod"), patch), folder, "prod"),
                                              "prod")}


def test_only_nodes_with_a_network_get_the_step_between_install_and_verify(tmp_path):
    resources = planned(tmp_path, {"ascend-npu:rollout.allowReboot": True})
    steps = sorted(name for name in resources if name.endswith("-npu-network"))
    assert steps == [f"ascend-npu-{TRAIN_01}-npu-network", f"ascend-npu-{TRAIN_02}-npu-network"]
    step = resources[steps[0]]
    urn = {suffix: resources[f"ascend-npu-{TRAIN_01}-{suffix}"].urn for suffix in ("install", "reboot-wait")}
    assert set(step.dependencies) == set(urn.values())
    assert step.urn in resources[f"ascend-npu-{TRAIN_01}-verify"].dependencies
    on_the_node = step.properties["environment"]["ASCEND_NPU_ON_NODE"]  # what the local step runs there over ssh
    assert "ASCEND_NPU_NETWORK='0,192.168.100.11,255.255.255.0,192.168.100.1,192.168.100.1 " in on_the_node


def test_a_changed_address_changes_that_nodes_network_step_and_nothing_else(tmp_path):
    before = planned(tmp_path, name="before")
    moved = {"ascend-npu:nodes[1].npuNetwork": {"addresses": [
        "192.168.100.21", "192.168.100.22", "192.168.100.99", "192.168.100.24", "192.168.101.21", "192.168.101.22",
        "192.168.101.23", "192.168.101.24"]}}
    after = planned(tmp_path, moved, name="after")
    assert before.keys() == after.keys()
    changed = sorted(name for name in before if before[name].properties != after[name].properties
                     and before[name].type.startswith("command:"))
    assert changed == [f"ascend-npu-{TRAIN_02}-npu-network"]
