"""A hint names the command that was run, for the stack it ran for, with paths relative to the clone.

tests/fixtures/first-day/Pulumi.lab.yaml is a copied stack whose SSH key is not set yet.
"""
from __future__ import annotations

import pytest

from components.bundle.__main__ import main as bundle
from components.chart.template import render_stack
from components.config import SpecError
from components.config.config_source import spec_from_values
from components.config.invocation import running
from components.doctor.checks.agents import pull_fix
from components.plan.stack_files import read_stack_config
from components.plan.stack_plan import plan
from tests.stacks import ROOT

LAB = ROOT / "tests" / "fixtures" / "first-day" / "Pulumi.lab.yaml"
SSH_KEY = "ascend-npu:sshPrivateKey: not set; run `pulumi config set --secret --stack lab sshPrivateKey < KEYFILE`"


def test_make_plan_names_make_plan(tmp_path, capsys):
    assert plan("lab", tmp_path, LAB, quiet=True) == 2
    said = capsys.readouterr().err
    assert SSH_KEY in said and "`make plan STACK=lab PLACEHOLDER_SECRETS=sshPrivateKey`" in said


def test_make_template_names_make_template_not_make_plan(tmp_path, capsys):
    assert render_stack("lab", tmp_path, LAB) == 2
    said = capsys.readouterr().err
    assert "`make template STACK=lab PLACEHOLDER_SECRETS=sshPrivateKey`" in said
    assert "make plan" not in said and "<stack>" not in said


@pytest.mark.parametrize("args, again", [
    ([], "make bundle STACK=lab PLACEHOLDER_SECRETS=sshPrivateKey"),
    (["--check", "site"], "make bundle STACK=lab CHECK=site PLACEHOLDER_SECRETS=sshPrivateKey"),
    (["--out", str(ROOT / "build" / "lab-bundle")], "make bundle STACK=lab OUT=build/lab-bundle "
                                                    "PLACEHOLDER_SECRETS=sshPrivateKey"),
])
def test_make_bundle_names_make_bundle_with_the_variables_given(args, again, capsys):
    assert bundle(["--stack", "lab", "--stack-file", str(LAB), *args]) == 2
    said = capsys.readouterr().err
    assert f"`{again}`" in said and "make plan" not in said


def test_the_program_offers_no_make_variable_a_preview_cannot_take():
    config = read_stack_config(ROOT, "lab", LAB)
    with pytest.raises(SpecError) as refused:
        spec_from_values(config.values, config.secret_keys, stack="lab")
    said = str(refused.value)
    assert SSH_KEY in said and "PLACEHOLDER_SECRETS" not in said and "make " not in said


def test_a_hint_after_its_command_ends_names_the_program_again(tmp_path, capsys):
    assert render_stack("lab", tmp_path, LAB) == 2
    capsys.readouterr()
    config = read_stack_config(ROOT, "lab", LAB)
    with pytest.raises(SpecError) as refused:
        spec_from_values(config.values, config.secret_keys, stack="lab")
    assert "make template" not in str(refused.value)


def test_the_helm_hint_shows_the_chart_and_values_relative_to_the_clone(capsys):
    out = ROOT / "build" / "hints-dev"
    assert render_stack("dev", out) == 0
    said = capsys.readouterr().out
    assert "`helm install ascend-npu charts/ascend-npu -n kube-system -f build/hints-dev/chart-values.yaml`" in said
    assert "in build/hints-dev/manifests.yaml" in said and str(ROOT) not in said


def test_the_doctor_names_the_stack_it_checks():
    with running("make doctor", "lab"):
        assert "`make bundle STACK=lab CHECK=site`" in pull_fix()


def test_the_chart_commands_name_the_chart_relative_to_the_clone(capsys):
    from components.chart.__main__ import main as chart
    assert chart(["check"]) == 0
    assert capsys.readouterr().out == "charts/ascend-npu matches the generator\n"
