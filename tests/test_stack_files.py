"""Stack files are read with the Pulumi CLI's rules (gopkg.in/yaml.v3 into `any`, then its config encoding)."""
from __future__ import annotations

import json

import pytest

from components.plan.cli_yaml import YamlError, load
from components.plan.stack_files import SECRET_PLACEHOLDER, StackFileError, config_key, read_stack_config
from components.plan.yaml_scalars import resolve_plain
from tests.stacks import ROOT


@pytest.mark.parametrize("text, value", [
    ("true", True), ("False", False), ("TRUE", True),
    ("yes", "yes"), ("No", "No"), ("on", "on"), ("off", "off"), ("y", "y"),  # YAML 1.1 words stay text
    ("1:20", "1:20"), ("190:20:30", "190:20:30"),                            # no sexagesimal numbers
    ("0110", 72), ("0o110", 72), ("0x1F", 31), ("0b101", 5), ("-012", -10), ("1_000", 1000),
    ("08", 8.0), ("1e3", 1000.0), (".5", 0.5), ("+5", 5), ("1.", 1.0),
    ("9223372036854775808", 9223372036854775808), ("18446744073709551616", 1.8446744073709552e19),
    ("1e400", "1e400"), ("~", None), ("null", None), ("", None), ("-", "-"), ("0x", "0x"), ("=", "="),
])
def test_plain_scalars_read_as_yaml_v3_reads_them(text, value):
    assert resolve_plain(text) == value and type(resolve_plain(text)) is type(value)


@pytest.mark.parametrize("text, refused", [("2001-12-14", True), ("2001-12-14t21:59:43.10-05:00", True),
                                           ("2001-12-14 21:59:43.10", True), ("2001-1-2", True),
                                           ("2001-13-14", False), ("2001-12-14 21:59:43.10 -5", False),
                                           ("24.1.rc2", False)])
def test_timestamps_are_refused_with_a_hint_to_quote(text, refused):
    value, problems, _ = load(f"a: {text}\nb: '{text}'\n")
    assert [p for p, _, m in problems if "quote it" in m] == (["a"] if refused else [])
    assert value["b"] == text


def test_quoted_and_block_scalars_are_always_text():
    value, problems, _ = load("a: '0110'\nb: \"yes\"\nc: |\n  1:20\n")
    assert value == {"a": "0110", "b": "yes", "c": "1:20\n"} and problems == []


def test_duplicate_keys_are_refused_at_every_depth_and_named():
    _, problems, _ = load("a:\n  b:\n    - {c: 1, d: 2, c: 3}\n  e: 1\n  e: 2\n")
    assert [(path, line) for path, line, _ in problems] == [("a.b[0].c", 3), ("a.e", 5)]


def test_merge_keys_apply_and_explicit_keys_win():
    value, problems, _ = load("base: &b {x: 1, y: 2}\nmore: &m {y: 3, z: 4}\nuse: {<<: [*b, *m], x: 9}\n")
    assert value["use"] == {"x": 9, "y": 2, "z": 4} and problems == []


def test_aliasing_is_bounded_like_yaml_v3():
    fine = "a: &a [1, 2, 3]\n" + "".join(f"k{i}: *a\n" for i in range(300))
    assert load(fine)[1] == []
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcde", "bcdef"))
    with pytest.raises(YamlError, match="excessive aliasing"):
        load(bomb)


def test_yaml_errors_say_where_but_never_echo_the_text():
    with pytest.raises(YamlError) as caught:
        load("a: 1\nb: [Zm9vYmFyc2VjcmV0, c: d\n")
    assert str(caught.value).startswith("line 3, column 1: did not find expected ',' or ']' (while parsing a flow "
                                        "sequence at line 2)")
    assert "Zm9vYmFyc2VjcmV0" not in str(caught.value)


@pytest.mark.parametrize("key, full", [("nodes", "ascend-npu:nodes"), ("ascend-npu:nodes", "ascend-npu:nodes"),
                                       ("ascend-npu:config:nodes", "ascend-npu:nodes"), ("aws:region", "aws:region"),
                                       ("a:b:c", None), (":nodes", None)])
def test_config_keys_parse_as_the_cli_parses_them(key, full):
    assert config_key(key, "ascend-npu") == full


def write(tmp_path, text):
    path = tmp_path / "Pulumi.case.yaml"
    path.write_text(text)
    return path


def test_values_reach_the_program_as_the_cli_encodes_them(tmp_path):
    path = write(tmp_path, "config:\n  ascend-npu:rollout: {maxParallel: 2, allowReboot: yes}\n"
                           "  ascend-npu:cluster: {name: {secure: AAABAKxn0Q==}}\n  ascend-npu:ssh: {secure: 5}\n"
                           "  other:flag: true\n  ascend-npu:kubeNote: 0x10\n")
    config = read_stack_config(ROOT, "case", path)
    assert json.loads(config.values["ascend-npu:rollout"]) == {"maxParallel": 2, "allowReboot": "yes"}
    assert json.loads(config.values["ascend-npu:cluster"]) == {"name": SECRET_PLACEHOLDER}
    assert json.loads(config.values["ascend-npu:ssh"]) == {"secure": 5}, "`secure` must hold text to be a secret"
    assert config.values["other:flag"] == "true" and config.values["ascend-npu:kubeNote"] == "16"
    assert config.secret_keys == ["ascend-npu:cluster"]
    assert config.numbers["ascend-npu:rollout.maxParallel"] == "2"


def test_same_key_namespaced_and_short_is_refused(tmp_path):
    path = write(tmp_path, "config:\n  nodes: []\n  ascend-npu:nodes: []\n")
    with pytest.raises(StackFileError, match="ascend-npu:nodes: written twice"):
        read_stack_config(ROOT, "case", path)


def test_empty_stack_file_is_an_empty_config(tmp_path):
    config = read_stack_config(ROOT, "case", write(tmp_path, "# nothing yet\n"))
    assert "ascend-npu:cluster" not in config.values and config.secret_keys == []


@pytest.mark.parametrize("line, refused", [("ascend-npu:rollout:", "is empty"),
                                           ("ascend-npu:rollout: '{\"maxParallel\": 2}'", "is text holding JSON"),
                                           ("ascend-npu:nodes: '[]'", "is text holding JSON"),
                                           ("ascend-npu:rollout: eight", None), ("ascend-npu:sshPrivateKey:", None)])
def test_values_the_cli_refuses_for_a_typed_key(tmp_path, line, refused):
    path = write(tmp_path, f"config:\n  {line}\n")
    if refused is None:
        read_stack_config(ROOT, "case", path)
        return
    with pytest.raises(StackFileError, match=refused):
        read_stack_config(ROOT, "case", path)
