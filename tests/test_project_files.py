"""Pulumi.yaml and PulumiPolicy.yaml follow the rules the real Pulumi CLI enforces; generated docs are current."""
from __future__ import annotations

import re

import yaml

from components.config.reference import config_reference, render_pulumi_yaml
from components.config.reference import main as reference_main
from components.config.stack import CONFIG_KEYS
from tests.stacks import ROOT

CONFIG_TYPES = {"string", "integer", "boolean", "array", "object"}
DECLARATION_KEYS = {"type", "items", "description", "secret", "default"}


def project() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def test_project_name_and_runtime_are_what_the_cli_accepts():
    p = project()
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", p["name"]) and p["name"] == "ascend-npu"
    assert p["description"]
    assert p["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}


def test_every_config_declaration_uses_only_allowed_keys_and_types():
    for key, decl in project()["config"].items():
        assert isinstance(decl, dict), key
        assert set(decl) <= DECLARATION_KEYS, f"{key}: {set(decl) - DECLARATION_KEYS}"
        assert decl["type"] in CONFIG_TYPES, key
        assert decl.get("description"), f"{key} has no description"
        if decl["type"] == "array":
            assert decl["items"]["type"] in CONFIG_TYPES, key
        assert not (decl.get("default") is not None and decl["type"] == "string" and decl.get("secret")), \
            f"{key}: a secret cannot carry a default"


def test_every_model_key_is_declared_and_required_keys_have_no_default():
    config = project()["config"]
    assert list(config) == [k.name for k in CONFIG_KEYS]
    for key in CONFIG_KEYS:
        assert ("default" in config[key.name]) is (not key.required), key.name


def test_stack_files_use_only_declared_keys():
    declared = set(project()["config"])
    for stack in ("dev", "prod"):
        data = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
        for key in data["config"]:
            namespace, _, name = key.partition(":")
            assert namespace == "ascend-npu" and name in declared, f"{stack}: {key}"
        required = {k.name for k in CONFIG_KEYS if k.required}
        assert required <= {k.split(":", 1)[1] for k in data["config"]}, stack


def test_policy_pack_project_file():
    pack = yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())
    assert pack["runtime"]["name"] == "python" and pack["description"]
    assert (ROOT / "policies" / "__main__.py").exists() and (ROOT / "policies" / "requirements.txt").exists()
    assert "pulumi-policy" in (ROOT / "policies" / "requirements.txt").read_text()


def test_pulumi_yaml_and_the_config_reference_page_are_generated_from_the_model():
    assert (ROOT / "Pulumi.yaml").read_text() == render_pulumi_yaml()
    assert config_reference() in (ROOT / "docs" / "stack-config.md").read_text()
    assert reference_main(["--check"]) == 0


def test_reference_lists_every_field_of_every_section():
    text = config_reference()
    for needle in ("`nodes[].hostKey`", "`rollout.maxParallel`", "`pools.<name>.chip`", "`packages.files[].sha256`",
                   "`ssh.bastion.hostKey`", "`versions.compatibilityOverride.reason`"):
        assert needle in text
