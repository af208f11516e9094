"""A config section is one field on StackSpec; a chart value names its setting once, by the path a stack writes."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from pydantic import Field

import components.config.reference as reference
from components.cluster.values_contract import stack_sources
from components.cluster.values_schema import setting, spec_field
from components.config.base import SpecModel
from components.config.cluster import Exporter
from components.config.config_source import raw_config, spec_from_values
from components.config.problems import SpecError
from components.config.setting_paths import setting_path
from components.config.stack import KEYS_BY_NAME
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT

STACK_MODULE = Path(reference.__file__).with_name("stack.py")
# The one line a new section adds, as the recipe writes it.
NEW_LINE = '    chip_watch: ChipWatch = section("How often the node agents read the chips.")\n'


class ChipWatch(SpecModel):
    """A section no stack has: how often the chips are read."""

    interval_seconds: int = Field(30, ge=1, le=600, description="Seconds between two reads of the chips.")


@pytest.fixture
def stack_with_chip_watch(monkeypatch):
    """components/config/stack.py with NEW_LINE added to StackSpec, loaded as a module of its own."""
    source = STACK_MODULE.read_text()
    end_of_fields = source.index("\n    @property\n", source.index("class StackSpec"))
    module = types.ModuleType("stack_with_chip_watch")
    module.ChipWatch = ChipWatch
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(source[:end_of_fields + 1] + NEW_LINE + source[end_of_fields + 1:], str(STACK_MODULE), "exec"),
         module.__dict__)
    monkeypatch.setattr(reference, "CONFIG_KEYS", module.CONFIG_KEYS)
    return module


def dev_config() -> dict:
    return raw_config(read_stack_config(ROOT, "dev").values)


def test_the_unchanged_spec_has_no_such_section():
    assert "chipWatch" not in KEYS_BY_NAME
    assert "chipWatch" not in reference.render_pulumi_yaml()


def test_one_field_on_stack_spec_is_a_config_key_parsed_checked_and_documented(stack_with_chip_watch):
    module = stack_with_chip_watch
    key = module.KEYS_BY_NAME["chipWatch"]
    assert (key.attr, key.annotation, key.required, key.secret) == ("chip_watch", ChipWatch, False, False)
    assert module.parse_stack({**dev_config(), "chipWatch": {"intervalSeconds": 7}}).chip_watch.interval_seconds == 7
    assert module.parse_stack(dev_config()).chip_watch == ChipWatch()
    with pytest.raises(SpecError) as refused:
        module.parse_stack({**dev_config(), "chipWatch": {"intervalSeconds": 0}})
    assert [p.field for p in refused.value.problems] == ["chipWatch.intervalSeconds"]
    with pytest.raises(SpecError) as unknown:
        module.parse_stack({**dev_config(), "chipwatch": {}})
    assert "validation, dashboardAccess, images, registryCredentials, chipWatch" in str(unknown.value)
    assert reference.pulumi_config_block()["chipWatch"] == {
        "type": "object", "description": "How often the node agents read the chips.", "default": {}}
    page = reference.config_reference()
    assert "### `ascend-npu:chipWatch` (optional)" in page
    assert "| `chipWatch.intervalSeconds` | integer | `30` | Seconds between two reads of the chips. |" in page


@pytest.mark.parametrize("path, model, attrs", [
    ("exporter.updateTime", "Exporter", "exporter.update_time"),
    ("monitoring.alerts.hbmUsedPercent", "Alerts", "monitoring.alerts.hbm_used_percent"),
    ("dashboardAccess.serviceAccount", "DashboardAccess", "dashboard_access.service_account"),
    ("devicePlugin.image.pullPolicy", "DevicePluginImage", "device_plugin.image.pull_policy"),
])
def test_a_setting_path_is_the_key_a_stack_writes(path, model, attrs):
    found = setting_path(path)
    assert (found.model.__name__, found.attrs, found.is_field) == (model, attrs, True)


@pytest.mark.parametrize("path, says", [
    ("exporter.updatetime", "Exporter has no key 'updatetime'; its keys are: enabled, image, releaseOverride, port, "
                            "updateTime, resources"),
    ("exportr.port", "no config key 'exportr'"),
    ("exporter.port.value", "exporter.port is not an object with keys"),
    ("exporter", "name a setting inside the section"),
    ("exporter.release", "derived from other settings, not one of its own: give its schema"),
])
def test_a_mistyped_setting_fails_when_the_contract_is_built(path, says):
    with pytest.raises(ValueError, match=says):
        setting(path)


def test_a_value_names_its_field_once_for_schema_and_source():
    value = setting("exporter.updateTime", description="Seconds between reads.")
    assert value.schema == spec_field(Exporter, "updateTime", "Seconds between reads.")
    assert value.schema["type"] == ["integer", "null"]
    config = read_stack_config(ROOT, "prod")
    spec = spec_from_values(config.values, config.secret_keys)
    assert value.source(stack_sources(spec)) == spec.exporter.update_time
    derived = setting("devicePlugin.release", {"type": "string"}, str.upper)
    assert derived.source(stack_sources(spec)) == spec.device_plugin.release.upper()
