"""Synthetic stacks of any size, shaped like the production example (two pools, two engines)."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# The example passphrase Pulumi.prod.yaml's secrets were made with (docs/stack-config.md), so a synthetic stack's too.
PASSPHRASE = "ascend-npu-example"


def synthetic_stack(nodes: int) -> dict:
    """The prod stack with `nodes` nodes: three quarters training (910B), one quarter inference (310P)."""
    stack = copy.deepcopy(yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text()))
    config = stack["config"]
    template = config["ascend-npu:nodes"]
    train_key, infer_key = template[0]["hostKey"], template[-1]["hostKey"]
    out = []
    for i in range(nodes):
        pool = "infer" if i % 4 == 3 else "train"
        address = f"10.{64 + i // 65536}.{i // 256 % 256}.{i % 256}"
        out.append({"name": f"{pool}-{i:04d}.bench.example", "address": address,
                    "hostKey": infer_key if pool == "infer" else train_key, "pool": pool})
    config["ascend-npu:nodes"] = out
    config["ascend-npu:rollout"]["canaries"] = [out[0]["name"], out[3]["name"]] if nodes > 3 else [out[0]["name"]]
    return stack


def write_synthetic(nodes: int, directory: Path) -> Path:
    path = directory / f"Pulumi.bench-{nodes}.yaml"
    path.write_text(yaml.safe_dump(synthetic_stack(nodes), sort_keys=False))
    return path
