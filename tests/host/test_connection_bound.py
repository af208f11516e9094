"""The bound of a rollout's SSH connections at once (components/host/rollout.py peak_connections)."""
from __future__ import annotations

import yaml

from bench.synthetic import write_synthetic
from components.config.config_source import spec_from_values
from components.host.rollout import peak_connections
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT


def spec_of(path, bastion: bool):
    stack = yaml.safe_load(path.read_text())
    if not bastion:
        stack["config"]["ascend-npu:ssh"].pop("bastion", None)
        stack["config"]["ascend-npu:rollout"].pop("allowReboot", None)
    variant = path.with_name(f"Pulumi.{path.stem.split('.', 1)[1]}-{bastion}.yaml")
    variant.write_text(yaml.safe_dump(stack, sort_keys=False))
    config = read_stack_config(ROOT, variant.stem.split(".", 1)[1], variant)
    return spec_from_values(config.values, config.secret_keys)


def test_a_rollout_holds_no_more_than_parallel_nor_two_per_node_of_a_wave(tmp_path):
    spec = spec_of(write_synthetic(1000, tmp_path), True)
    assert spec.rollout.max_parallel == 8
    bound = [peak_connections(spec.nodes, spec.canaries, spec.rollout.max_parallel, p) for p in (4, 8, 16, 1000)]
    assert bound == [4, 8, 16, 16]
