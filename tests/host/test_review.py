"""What a reviewer reads of each node in `pulumi preview --diff`: the AscendHost component's `review` input (its
wave, packages with their sums, where they come from, NPU addresses, what its drain does), each value short enough
for the CLI to show whole (v3.274.0 cuts a string at 150 characters and 3 lines), kept out of the outputs."""
from __future__ import annotations

import json

import yaml

from tests.conftest import run_stack_file
from tests.stacks import ROOT, load_stack, patched, write_stack

HOST = "ascend-npu:index:AscendHost"
NETWORK = ROOT / "tests/bad_configs/accepted/npu-network-from-the-pool.yaml"
TRAIN_01 = "train-01.prod.corp.example"


def hosts(tmp_path, patch: dict | None = None) -> dict:
    config = patched(load_stack("prod"), patch or {})
    tmp_path.mkdir(parents=True, exist_ok=True)
    return {r.name.removeprefix("ascend-npu-"): r for r in run_stack_file(write_stack(config, tmp_path, "prod"), "prod")
            if r.type == HOST}


def strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def test_each_node_shows_its_wave_packages_with_sums_source_and_drain(tmp_path):
    found = hosts(tmp_path)
    config = load_stack("prod")["config"]
    mirror = config["ascend-npu:packages"]["mirrorUrl"]
    sums = {p["file"]: p["sha256"] for p in config["ascend-npu:packages"]["files"]}
    waves = sorted({h.properties["review"]["wave"] for h in found.values()}, key=lambda w: int(w.split()[0]))
    assert waves[0].endswith("(canary)") and len(waves) > 2
    for name, host in found.items():
        review = host.properties["review"]
        assert review["packagesFrom"].startswith(f"mirror {mirror}")
        assert review["packages"] and all(p["sha256"] == sums[p["file"]] for p in review["packages"])
        assert {p["kind"] for p in review["packages"]} >= {"driver", "firmware", "toolkit", "kernels"}
        assert review["drain"]["whenChanged"].startswith(f"driver {config['ascend-npu:versions']['driver']}")
        assert "review" not in host.outputs  # the state keeps it once
        assert all(len(s) <= 150 and "\n" not in s for s in strings(review)), name


def test_npu_addresses_show_one_per_npu(tmp_path):
    found = hosts(tmp_path, yaml.safe_load(NETWORK.read_text()))
    network = found[TRAIN_01].properties["review"]["npuNetwork"]
    assert len(network) == 8 and network[0] == {"npu": 0, "address": "192.168.100.11", "netmask": "255.255.255.0",
                                                "gateway": "192.168.100.1", "detect": "192.168.100.1"}


def test_a_stack_without_drain_says_so_and_a_changed_package_changes_the_review(tmp_path):
    off = hosts(tmp_path / "off", {"set": {"ascend-npu:rollout.drain.enabled": False}})
    assert all(set(h.properties["review"]["drain"]) == {"off"} for h in off.values())
    before = hosts(tmp_path / "before")
    files = json.loads(json.dumps(load_stack("prod")["config"]["ascend-npu:packages"]["files"]))
    driver = next(f for f in files if f["kind"] == "driver" and f.get("chip") == "910B")
    driver["sha256"] = "0" * 64
    after = hosts(tmp_path / "after", {"set": {"ascend-npu:packages.files": files}})
    changed = {n for n in before if before[n].properties["review"] != after[n].properties["review"]}
    assert changed and all(after[n].properties["chip"] == "910B" for n in changed)
