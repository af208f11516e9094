"""The parameters' usual values (parameters.py `default`): a command carries only a value that differs, names it in
ASCEND_GIVEN, and the staged script sets every other one to its usual value, run by bash exactly as staged. So each
step sees the values parameters.py derives, and a variable of such a name in the node's own environment is never
taken for one the command left out."""
from __future__ import annotations

import dataclasses
import shlex
import subprocess

import pytest

from components.config.timeouts import DEFAULTS as TIMEOUT_DEFAULTS
from components.host.commands import DEFAULT_STAGING, _inputs, host_steps
from components.host.parameters import DEFAULTS, GIVEN, command_parameters, step_names, step_parameters
from tests.host.test_catalog_facts import prod_spec, staged_without_its_run


def seen_by_script(step: str, given: dict[str, str]) -> dict[str, str]:
    """Every parameter of STEP after require_params, the command's parameters GIVEN as its environment."""
    shown = "".join(f"printf '%s=%s\\n' {name} \"${{{name}}}\"\n" for name in step_names(step))
    done = subprocess.run(["bash", "-c", staged_without_its_run(step) + "require_params\n" + shown],
                          env={"PATH": "/usr/bin:/bin", **given}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def unusual(spec):
    """SPEC with settings away from their usual values: other timeouts, reboots and downgrades allowed."""
    rollout = spec.rollout.model_copy(update={
        "allow_reboot": True, "allow_downgrade": True,
        "timeouts": spec.rollout.timeouts.model_copy(update={"driver": 2400, "engine_restart": 90})})
    return dataclasses.replace(spec, rollout=rollout)


@pytest.mark.parametrize("shape", ["prod", "unusual"])
@pytest.mark.parametrize("step", ["install", "verify"])
def test_the_script_sees_every_value_parameters_py_derives(step, shape):
    spec = prod_spec() if shape == "prod" else unusual(prod_spec())
    for node in spec.nodes[:2]:
        inputs = _inputs(spec, node, DEFAULT_STAGING)
        carried = dict(command_parameters(step, inputs))
        derived = {name: value for name, value in step_parameters(step, inputs) if name != GIVEN}
        seen = {name: value for name, value in seen_by_script(step, carried).items() if name != GIVEN}
        assert seen == derived


def test_a_command_carries_only_values_that_differ_from_the_usual_and_names_them():
    spec = unusual(prod_spec())
    words = shlex.split(host_steps(spec, spec.nodes[0])["install"].create)
    carried = dict(w.split("=", 1) for w in words if w.startswith("ASCEND_") and "=" in w)
    assert carried["ASCEND_DRIVER_TIMEOUT"] == "2400" and carried["ASCEND_ALLOW_REBOOT"] == "true"
    assert set(carried[GIVEN].split()) == {"ASCEND_DRIVER_TIMEOUT", "ASCEND_ENGINE_RESTART_TIMEOUT",
                                           "ASCEND_ALLOW_REBOOT", "ASCEND_ALLOW_DOWNGRADE", "ASCEND_MIRROR_URL"}
    for usual in ("ASCEND_FIRMWARE_TIMEOUT", "ASCEND_ALLOW_DISRUPTION", "ASCEND_KINDS", "ASCEND_CRI_DOCKERD_MIN"):
        assert usual not in carried, usual
    assert DEFAULTS["ASCEND_FIRMWARE_TIMEOUT"] == str(TIMEOUT_DEFAULTS["firmware"])


def test_a_variable_of_the_nodes_own_environment_never_stands_for_a_value_left_out():
    spec = prod_spec()
    carried = dict(command_parameters("install", _inputs(spec, spec.nodes[0], DEFAULT_STAGING)))
    assert "ASCEND_ALLOW_DISRUPTION" not in carried
    seen = seen_by_script("install", {**carried, "ASCEND_ALLOW_DISRUPTION": "true", "ASCEND_DRIVER_TIMEOUT": "5"})
    assert seen["ASCEND_ALLOW_DISRUPTION"] == "false" and seen["ASCEND_DRIVER_TIMEOUT"] == "1800"


def test_a_command_without_its_given_list_stops_naming_it():
    spec = prod_spec()
    carried = dict(command_parameters("verify", _inputs(spec, spec.nodes[0], DEFAULT_STAGING)))
    del carried[GIVEN]
    done = subprocess.run(["bash", "-c", staged_without_its_run("verify") + "require_params\n"],
                          env={"PATH": "/usr/bin:/bin", **carried}, capture_output=True, text=True)
    assert done.returncode != 0 and f"parameter {GIVEN} is not set in this step's command" in done.stderr
