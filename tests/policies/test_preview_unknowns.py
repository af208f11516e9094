"""A rule that meets a value a preview cannot know says which resource and which value, under the pack's one version;
the reboot wait's boot, the one value ascend-npu leaves unknown in a preview, blinds no rule."""
from __future__ import annotations

import json

import yaml

from components.plan.stack_plan import plan
from tests.policies.test_rules import as_recorded
from tests.stacks import ROOT, load_stack, patched, write_stack

UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown string during preview
VERSION = str(yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())["version"])
PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"
WAIT = ("exec \"${ASCEND_NPU_PYTHON:-.venv/bin/python}\" -m components.runner reboot-wait --contract 2 --node npu-01 "
        f"--address 10.20.0.11:22 --user root --host-key '{PIN}' --timeout 1200")


def analyzed(pack, doc: dict) -> list:
    return pack.analyze(as_recorded(doc), {})


def test_an_unknown_value_names_the_resource_the_value_and_when_it_is_judged(pack):
    step = {"type": "command:local:Command", "name": "site-firmware-step", "properties": {"create": UNKNOWN_STRING}}
    found = analyzed(pack, step)
    assert found and {d.policy for d in found} <= {"host-versions-pinned", "ssh-host-key-pinning"}
    for d in found:
        assert d.level == "advisory" and d.urn == as_recorded(step).urn
        assert "command:local:Command site-firmware-step: string value at .create can't be known" in d.message
        assert "judges it at `pulumi up`" in d.message and "policies/README.md" in d.message


def test_the_pack_reports_its_one_version_everywhere(pack):
    assert pack.info().version == VERSION
    step = {"type": "command:local:Command", "name": "x", "properties": {"create": UNKNOWN_STRING}}
    assert all(f"'ascend-npu@v{VERSION}'" in d.message for d in analyzed(pack, step))


def test_the_reboot_waits_unknown_boot_is_data_no_rule_reads(pack):
    wait = {"type": "command:local:Command", "name": "ascend-npu-npu-01-reboot-wait",
            "properties": {"create": WAIT, "environment": {"ASCEND_NPU_REBOOT_FROM": UNKNOWN_STRING}}}
    assert analyzed(pack, wait) == []
    other = {**wait, "properties": {"create": WAIT, "environment": {"ASCEND_NPU_STEP": UNKNOWN_STRING}}}
    found = analyzed(pack, other)
    assert found and all(d.level == "advisory" and ".environment.ASCEND_NPU_STEP" in d.message for d in found)


def test_a_stack_that_reboots_plans_without_an_advisory(tmp_path, capsys):
    stack = patched(load_stack("dev"), {"set": {"ascend-npu:rollout.allowReboot": True}})
    assert plan("rb", tmp_path, write_stack(stack, tmp_path, "rb")) == 0
    assert "0 mandatory and 0 other violations" in capsys.readouterr().out
    assert json.loads((tmp_path / "policy-report.json").read_text())["violations"] == []
    waits = [r for r in json.loads((tmp_path / "resources.json").read_text()) if r["name"].endswith("-reboot-wait")]
    assert len(waits) == 2 and all(w["inputs"]["environment"] == {"ASCEND_NPU_REBOOT_FROM": "[unknown]"}
                                   for w in waits)


def test_the_packs_data_keys_are_the_runners_own(pack_module):
    """The pack runs apart from the program: its name for the reboot wait's boot is the runner contract's."""
    from components.runner.contract import REBOOT_FROM
    assert pack_module("model.preview").DATA_KEYS == {REBOOT_FROM}
