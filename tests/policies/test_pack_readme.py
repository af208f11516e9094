"""policies/README.md's rules table is the rules' metadata, and its example config is one the pack accepts."""
from __future__ import annotations

import json
import re

from google.protobuf import json_format

from tests.policies.test_rules import as_recorded
from tests.stacks import ROOT

README = ROOT / "policies" / "README.md"


def example_config() -> dict:
    return json.loads(re.search(r"```json\n(.*?)\n```", README.read_text(), re.S).group(1))


def test_readme_table_lists_every_rule_with_its_level(pack):
    row = re.compile(r"^\| \[`([a-z-]+)`\]\(\S+\) \| (\w+)", re.M)
    rows = {m.group(1): m.group(2) for m in row.finditer(README.read_text())}
    levels = {0: "advisory", 1: "mandatory"}
    assert list(rows.items()) == [(p.name, levels[p.enforcementLevel]) for p in pack.info().policies]


def test_readme_table_is_the_one_make_docs_writes(pack_module):
    readme = pack_module("readme")
    assert readme.rules_table() in README.read_text(), "policies/README.md's rules table is stale: run `make docs`"
    assert readme.main(["--check"]) == 0


def test_the_table_check_sees_a_stale_row(pack_module):
    readme = pack_module("readme")
    stale = readme.render(README.read_text()).replace("| advisory |", "| mandatory |", 1)
    assert readme.render(stale) != stale and readme.render(readme.render(stale)) == readme.render(stale)


def test_example_config_uses_only_keys_the_rules_declare(pack):
    schemas = {p.name: json_format.MessageToDict(p.configSchema.properties) for p in pack.info().policies}
    for rule, config in example_config().items():
        assert rule in schemas, rule
        assert set(config) - {"enforcementLevel"} <= set(schemas[rule]), rule


def test_example_config_takes_effect_in_the_running_pack(pack):
    pod = as_recorded({"type": "kubernetes:core/v1:Pod", "name": "bare",
                       "properties": {"spec": {"containers": [{"name": "c", "image": "registry.corp.example/a:1.0"}]}}})
    pack.configure(example_config())
    try:
        levels = {d.policy: d.level for d in pack.analyze(pod, {})}
    finally:
        pack.configure({})
    assert levels == {"recommended-labels": "mandatory", "read-only-root-filesystem": "advisory",
                      "image-pinning": "mandatory"}
