"""`secure:` values are checked offline as the Pulumi CLI would decrypt them; placeholders plan a stack without them.

Pulumi.prod.yaml's salt and secret were written by the real CLI (`pulumi stack init`, `pulumi config set
--secret`) under the example passphrase; the other ciphertexts here are sealed the same way or invented.
"""
from __future__ import annotations

import base64
import os

import pytest

from components.config.invocation import running
from components.plan.stack_files import SECRET_PLACEHOLDER, StackFileError, read_stack_config, with_placeholders
from components.plan.stack_plan import plan
from tests.stacks import PROD_PASSPHRASE, ROOT, load_stack, patched, seal, write_stack

KEY = "ascend-npu:sshPrivateKey"
SECRET_KEYS = ["sshPrivateKey", "mirrorCredentials"]


@pytest.fixture
def no_passphrase(monkeypatch):
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)


def problems(stack: dict, tmp_path) -> list[str]:
    try:
        with running("make plan", "copy"):
            read_stack_config(ROOT, "copy", write_stack(stack, tmp_path))
    except StackFileError as exc:
        return exc.problems
    return []


def invented(nonce_bytes: int = 12, sealed_bytes: int = 120) -> str:
    nonce, sealed = (base64.b64encode(os.urandom(n)).decode() for n in (nonce_bytes, sealed_bytes))
    return f"v1:{nonce}:{sealed}"


def test_the_clis_own_values_pass_with_and_without_the_passphrase(tmp_path, no_passphrase, monkeypatch):
    assert problems(load_stack("prod"), tmp_path) == []
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PROD_PASSPHRASE)
    assert problems(load_stack("prod"), tmp_path) == []
    (tmp_path / "phrase").write_text(PROD_PASSPHRASE + "\n")
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE_FILE", str(tmp_path / "phrase"))
    assert problems(load_stack("prod"), tmp_path) == []


def test_a_wrong_passphrase_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "not-it")
    [problem] = problems(load_stack("prod"), tmp_path)
    assert problem.startswith("encryptionsalt: PULUMI_CONFIG_PASSPHRASE is not this stack's passphrase")


@pytest.mark.parametrize("value", ["v1:abc", "v1:abc:def", "ciphertext-here", invented(nonce_bytes=16),
                                   invented(sealed_bytes=8), "v2:" + invented()[3:]],
                         ids=["two-parts", "short-parts", "no-prefix", "nonce-16-bytes", "sealed-8-bytes", "v2"])
def test_values_the_cli_never_writes_are_refused_offline(tmp_path, no_passphrase, value):
    stack = patched(load_stack("prod"), {"set": {KEY: {"secure": value}}})
    [problem] = problems(stack, tmp_path)
    assert problem.startswith(f"{KEY}: `secure:` is not a value the Pulumi CLI writes")
    assert "pulumi config set --secret --stack copy <key> <value>" in problem
    assert "make plan STACK=copy PLACEHOLDER_SECRETS=<key>" in problem


def test_an_invented_or_copied_value_is_refused_with_the_passphrase(tmp_path, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PROD_PASSPHRASE)
    other_salt = "v1:" + base64.b64encode(os.urandom(8)).decode() + ":v1:x:y"
    for value in (invented(), seal("a key", other_salt)):
        stack = patched(load_stack("prod"), {"set": {KEY: {"secure": value}}})
        [problem] = problems(stack, tmp_path)
        assert problem.startswith(f"{KEY}: `secure:` does not decrypt with this stack's passphrase")
    stack = patched(load_stack("prod"), {"set": {KEY: {"secure": seal("a key", load_stack("prod")["encryptionsalt"])}}})
    assert problems(stack, tmp_path) == []


@pytest.mark.parametrize("salt", ["v1:5sdy3Ad4Vrw=:v1:6Qw0e9Q0oXqRk1Zp:1x3Qm6t4yQZ0n8VbEw6S9Q==", "v1:abc", "x"])
def test_an_invented_salt_is_refused(tmp_path, no_passphrase, salt):
    stack = {**load_stack("prod"), "encryptionsalt": salt}
    [problem] = problems(stack, tmp_path)
    assert problem.startswith("encryptionsalt: not written by `pulumi stack init`")
    assert "run `pulumi stack init copy`" in problem


def test_cloud_providers_write_base64(tmp_path, no_passphrase):
    stack = {k: v for k, v in load_stack("prod").items() if k != "encryptionsalt"}
    stack["secretsprovider"] = "awskms://alias/ascend-npu?region=eu-west-1"
    assert problems(patched(stack, {"set": {KEY: {"secure": "AAABADi3kw=="}}}), tmp_path) == []
    [problem] = problems(patched(stack, {"set": {KEY: {"secure": "not base64!"}}}), tmp_path)
    assert problem.startswith(f"{KEY}: a cloud secrets provider writes standard base64")


def test_placeholders_plan_a_stack_whose_secrets_are_not_set(tmp_path):
    stack = patched(load_stack("prod"), {"unset": [KEY]})
    path = write_stack(stack, tmp_path)
    assert plan("copy", tmp_path / "out", path, quiet=True) != 0
    assert plan("copy", tmp_path / "out", path, quiet=True, placeholders=("sshPrivateKey",)) == 0
    config = with_placeholders(read_stack_config(ROOT, "copy", path), ["sshPrivateKey"], SECRET_KEYS)
    assert config.values[KEY] == SECRET_PLACEHOLDER and KEY in config.secret_keys


@pytest.mark.parametrize("key, says", [("cluster", "not a secret key; name one of sshPrivateKey, mirrorCredentials"),
                                       ("sshPrivateKey", "already set in Pulumi.copy.yaml")])
def test_placeholders_only_for_secret_keys_not_set(tmp_path, key, says):
    config = read_stack_config(ROOT, "copy", write_stack(load_stack("prod"), tmp_path))
    with pytest.raises(StackFileError) as refused:
        with_placeholders(config, [key], SECRET_KEYS)
    assert says in refused.value.problems[0]
