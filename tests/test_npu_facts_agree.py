"""The NPU facts the policy pack keeps (it must stay self-contained) agree with the program's."""
from __future__ import annotations

import importlib
import sys

import pytest

from components.cluster.common.node_labels import ACCELERATORS, NPU_TAINT_KEYS, RESOURCE_NAMES
from components.config.versions import VERSION
from tests.stacks import ROOT

VERSIONS_SEEN = ["24.1.rc2", "24.1.RC2", "8.0.RC3", "7.3.0.1.231", "25.0.rc1.1", "6.0.RC3", "6.0.0", "8.5.0",
                 "latest", "24", "24.1.*", ">=24.1", "v6.0.0", "24.1 rc2", "24..1", "", "8.0.RC3\n"]


@pytest.fixture(scope="module")
def pack_import():
    """Import a pack module the way the pack does (its folder on sys.path, `rules` and `model` top-level)."""
    sys.path.insert(0, str(ROOT / "policies"))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(ROOT / "policies"))


@pytest.fixture(scope="module")
def pack_rule(pack_import):
    return lambda name: pack_import(f"rules.{name}")


@pytest.fixture(scope="module")
def pack_model(pack_import):
    return lambda name: pack_import(f"model.{name}")


def test_taint_keys_tolerated_by_the_program_are_the_ones_the_pack_requires(pack_rule):
    assert list(pack_rule("npu_daemonset_safety").NPU_TAINT_KEYS) == list(NPU_TAINT_KEYS)


def test_resource_name_per_accelerator_label_agrees(pack_rule):
    pack = pack_rule("advertised_npu_resources").ACCELERATOR_RESOURCES
    program = {ACCELERATORS[chip]: RESOURCE_NAMES[chip] for chip in ACCELERATORS}
    assert pack == program


@pytest.mark.parametrize("version", VERSIONS_SEEN)
def test_exact_version_means_the_same_to_the_model_and_the_pack(pack_model, version):
    pack = pack_model("host_step_resources").EXACT_VERSION
    assert bool(pack.match(version)) == bool(VERSION.match(version))
