"""The warning when this machine's open-file limit is below what pulumi-command v1.2.1 holds open in a full rollout:
the count agrees with the program's own resources, and the limit read is the one a Go provider gets."""
from __future__ import annotations

import resource
import subprocess
import sys

import yaml

from bench.connections import count
from bench.synthetic import write_synthetic
from components.config.config_source import spec_from_values
from components.host.open_files import MARGIN, held_connections, shortfall
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


def test_the_count_is_what_the_program_registers(tmp_path):
    stack = write_synthetic(6, tmp_path)
    for bastion in (True, False):
        assert held_connections(spec_of(stack, bastion)) == count(stack, bastion)["operator_tcp"], bastion


def test_a_limit_below_the_count_says_the_numbers_and_the_fix(tmp_path):
    spec = spec_of(write_synthetic(1000, tmp_path), True)
    said = shortfall(spec, 1024)
    assert "all 1000 nodes holds 4000 SSH connections to the bastion" in said and "open 1024 files" in said
    assert f"ulimit -Hn {4000 + MARGIN}" in said and f"LimitNOFILE={4000 + MARGIN}" in said
    assert shortfall(spec, 4000 + MARGIN) is None and shortfall(spec, None) is None


def test_the_limit_read_is_the_hard_one_a_go_provider_raises_itself_to():
    probe = "from components.host.open_files import provider_limit; print(provider_limit())"
    hard = 4096 if resource.getrlimit(resource.RLIMIT_NOFILE)[1] >= 4096 else 512
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)))
    assert done.stdout.strip() == str(hard - 1)
