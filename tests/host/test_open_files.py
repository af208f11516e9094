"""The warning when this machine's open-file limit is below what a destroy of every node holds open, and the bound
of a rollout's connections."""
from __future__ import annotations

import resource
import subprocess
import sys

import yaml

from bench.synthetic import write_synthetic
from components.config.config_source import spec_from_values
from components.host.open_files import MARGIN, peak_connections, shortfall
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
    assert [peak_connections(spec, parallel) for parallel in (4, 8, 16, 1000)] == [4, 8, 16, 16]


def test_a_limit_below_a_full_destroy_says_the_numbers_and_the_fix(tmp_path):
    spec = spec_of(write_synthetic(1000, tmp_path), True)
    said = shortfall(spec, 1024)
    assert "`pulumi destroy` of all 1000 nodes" in said and "holds 1000 SSH connections to the bastion" in said
    assert "open 1024 files" in said and f"ulimit -Hn {1000 + MARGIN}" in said
    assert shortfall(spec, 1000 + MARGIN) is None and shortfall(spec, None) is None


def test_the_limit_read_is_the_hard_one_a_go_provider_raises_itself_to():
    probe = "from components.host.open_files import provider_limit; print(provider_limit())"
    hard = 4096 if resource.getrlimit(resource.RLIMIT_NOFILE)[1] >= 4096 else 512
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)))
    assert done.stdout.strip() == str(hard - 1)
