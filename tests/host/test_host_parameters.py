"""The host parameter contract: the scripts read exactly the ASCEND_* names parameters.py declares, and a step whose
command lacks one stops before it changes anything, naming it."""
from __future__ import annotations

import re
import subprocess

import pytest

from components.config.packages import Kind
from components.host.parameters import (
    KIND_FIELDS,
    NOT_PARAMETERS,
    PARAMETERS,
    Inputs,
    kind_prefix,
    step_names,
    step_parameters,
)
from components.host.script_set import SCRIPTS, SET_STEPS, script_text
from components.runner.on_node import NODE

NAME = re.compile(r"(?<![A-Za-z0-9_])ASCEND_[A-Z0-9]+(?:_[A-Z0-9]+)*")
# `kind_var KIND FIELD` (lib.sh): ASCEND_<KIND>_<FIELD> for the kind it is given.
KIND_VAR = re.compile(r"kind_var \"?\$\S+ \"?([A-Z0-9_]+)")
DECLARED = {param.name for param in PARAMETERS}


def script_sources() -> dict[str, str]:
    """Every shell and Python part of the host steps, and the runners their commands inline, by file name."""
    parts = sorted(SCRIPTS.glob("*.sh")) + sorted(SCRIPTS.glob("*.py")) + sorted(NODE.glob("*.sh"))
    return {path.name: path.read_text() for path in parts}


def literal_reads() -> dict[str, set[str]]:
    """Each ASCEND_* name the parts spell out, with the files that do."""
    found: dict[str, set[str]] = {}
    for file, text in script_sources().items():
        for name in NAME.findall(text):
            found.setdefault(name, set()).add(file)
    return found


def kind_fields() -> set[str]:
    return {field for text in script_sources().values() for field in KIND_VAR.findall(text)}


def family(field: str) -> set[str]:
    return {f"ASCEND_{kind_prefix(kind)}_{field}" for kind in Kind}


def test_every_name_the_scripts_read_is_declared():
    undeclared = {name: sorted(files) for name, files in literal_reads().items()
                  if name not in DECLARED and name not in NOT_PARAMETERS}
    assert undeclared == {}, "declare these in components/host/parameters.py, or fix their spelling"
    assert kind_fields() <= set(KIND_FIELDS), "kind_var reads a field parameters.py declares for no kind"


def test_every_declared_name_is_read_by_some_script():
    read = set(literal_reads()).union(*(family(field) for field in kind_fields()))
    assert sorted(DECLARED - read) == [], "no script reads these: drop them from parameters.py, or read them"
    assert all(family(field) <= DECLARED for field in KIND_FIELDS)
    assert len(DECLARED) == len(PARAMETERS)  # each declared once


def test_kind_var_spells_each_kind_as_parameters_py_does():
    program = f'. {SCRIPTS / "lib.sh"}; ' + "; ".join(
        f'ASCEND_{kind_prefix(kind)}_FILE={kind.value}-file; kind_var {kind.value} FILE; echo' for kind in Kind)
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True)
    assert result.stdout.split() == [f"{kind.value}-file" for kind in Kind], result.stderr


@pytest.mark.parametrize("step", SET_STEPS)
def test_each_staged_script_requires_its_steps_parameters(step):
    names = step_names(step)
    assert f"\nSTEP_PARAMS=({' '.join(names)})\n" in script_text(step) and names
    assert set(names) <= DECLARED


def test_a_required_value_the_stack_does_not_give_is_refused_before_any_command(node):
    spec = node.spec()
    inputs = Inputs(spec, spec.nodes[0], "/staging", {}, "v6.0.0", "", "", "0" * 64)
    with pytest.raises(ValueError, match="host parameter ASCEND_DRIVER_FILE .* of node fake-npu-01 is ''"):
        step_parameters("install", inputs)


def without(command: str, name: str) -> str:
    """COMMAND with the assignment of NAME taken out."""
    cut = re.sub(rf" {name}=('[^']*'|\S+)", "", command, count=1)
    assert cut != command
    return cut


@pytest.mark.parametrize("step, name", [("install", "ASCEND_ENGINE"), ("install", "ASCEND_GIVEN"),
                                        ("install", "ASCEND_KERNELS_VERSION"), ("verify", "ASCEND_NPU_COUNT"),
                                        ("on_destroy", "ASCEND_ON_DESTROY")])
def test_a_step_without_a_parameter_stops_naming_it(node, step, name):
    spec = node.spec()
    node.stage(spec, step)
    result = node.run(without(node.steps(spec)[step].create, name))
    label = step.replace("_", "-")
    assert result.returncode == 1
    assert (f"[{label}] parameter {name} is not set in this step's command (components/host/parameters.py "
            "declares it); nothing was changed") in result.stderr.splitlines()
    assert node.installer_calls() == [] and node.systemctl_calls() == []
