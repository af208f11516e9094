"""The pulumi-command stand-in driven over gRPC as the engine drives it, against the fake node's real sshd."""
from __future__ import annotations

import inspect
import os
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pulumi_command import remote

from engine.cache import REPO
from engine.command_standin import server
from tests.host.conftest import free_port

LAUNCHER = Path(server.__file__).with_name("pulumi-resource-command")
COMMAND, COPY = "command:remote:Command", "command:remote:CopyToRemote"
Kind = provider_pb2.PropertyDiff.Kind


def secret(value):
    return {rpc._special_sig_key: rpc._special_secret_sig, "value": value}


def struct(props: dict) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(props)
    return out


def urn(token: str, name: str) -> str:
    return f"urn:pulumi:test::standin::{token}::{name}"


def conn(node, port: int | None = None, **more) -> dict:
    """A connection as the SDK sends it: the whole of it secret."""
    return secret({"host": "127.0.0.1", "port": port or node.port, "user": "root", "hostKey": node.host_key,
                   "privateKey": (node.ssh_dir / "client_key").read_text(), **more})


def check(stub, token: str, name: str, props: dict) -> struct_pb2.Struct:
    response = stub.Check(provider_pb2.CheckRequest(urn=urn(token, name), news=struct(props)))
    assert not response.failures
    return response.inputs


def create(stub, token: str, name: str, props: dict, preview: bool = False):
    inputs = check(stub, token, name, props)
    made = stub.Create(provider_pb2.CreateRequest(urn=urn(token, name), properties=inputs, preview=preview))
    return inputs, made


def diff(stub, token, name, inputs, outputs, news) -> provider_pb2.DiffResponse:
    return stub.Diff(provider_pb2.DiffRequest(urn=urn(token, name), id="x", olds=outputs, old_inputs=inputs,
                                              news=check(stub, token, name, news)))


def test_create_runs_the_command_and_returns_stdout_with_the_connection_still_secret(provider, node):
    inputs, made = create(provider, COMMAND, "hello", {"connection": conn(node), "create": "echo hello; echo warn >&2"})
    outputs = rpc.deserialize_properties(made.properties, keep_unknowns=True)
    assert made.id.startswith("hello") and len(made.id) == len("hello") + 8
    assert (outputs["stdout"], outputs["stderr"]) == ("hello", "warn")
    stored = made.properties.fields["connection"].struct_value
    assert stored.fields[rpc._special_sig_key].string_value == rpc._special_secret_sig
    hop = stored.fields["value"].struct_value.fields
    assert (hop["dialErrorLimit"].number_value, hop["perDialTimeout"].number_value) == (10, 15)  # connection.go
    assert hop["privateKey"].struct_value.fields[rpc._special_sig_key].string_value == rpc._special_secret_sig


def test_preview_runs_nothing_and_leaves_stdout_unknown(provider, node):
    marker = node.root / "previewed"
    _, made = create(provider, COMMAND, "p", {"connection": conn(node), "create": f"touch {marker}"}, preview=True)
    assert made.properties.fields["stdout"].string_value == rpc.UNKNOWN
    assert not marker.exists()


def test_triggers_replace_and_a_new_create_command_updates_in_place(provider, node):
    props = {"connection": conn(node), "create": "echo one", "triggers": ["a", "b"]}
    inputs, made = create(provider, COMMAND, "d", props)
    same = diff(provider, COMMAND, "d", inputs, made.properties, props)
    assert same.changes == provider_pb2.DiffResponse.DIFF_NONE
    added = diff(provider, COMMAND, "d", inputs, made.properties, {**props, "triggers": None})
    assert list(added.replaces) == ["triggers"] and added.detailedDiff["triggers"].kind == Kind.Value("DELETE_REPLACE")
    # An element is a nested path the provider calls an update; the SDK's replace_on_changes makes it a replace.
    element = diff(provider, COMMAND, "d", inputs, made.properties, {**props, "triggers": ["a", "c"]})
    assert dict(element.detailedDiff) == {"triggers[1]": provider_pb2.PropertyDiff(kind=Kind.Value("UPDATE"))}
    assert 'replace_on_changes=["triggers[*]"]' in inspect.getsource(remote.Command._internal_init)
    changed = diff(provider, COMMAND, "d", inputs, made.properties, {**props, "create": "echo two"})
    assert changed.changes == provider_pb2.DiffResponse.DIFF_SOME and not changed.replaces
    assert list(changed.diffs) == ["create"]


def test_update_reruns_create_with_the_previous_stdout_in_the_env(provider, node, second_sshd):
    props = {"connection": conn(node, second_sshd), "create": "echo one"}
    inputs, made = create(provider, COMMAND, "u", props)
    news = check(provider, COMMAND, "u", {**props, "create": 'echo two; echo "was $PULUMI_COMMAND_STDOUT"'})
    updated = provider.Update(provider_pb2.UpdateRequest(urn=urn(COMMAND, "u"), olds=made.properties, news=news,
                                                         old_inputs=inputs))
    assert updated.properties.fields["stdout"].string_value == "two\nwas one"


def test_replace_deletes_with_the_old_delete_command_connection_and_stdin(provider, node, second_sshd):
    log = node.root / "deleted"
    old = {"connection": conn(node, second_sshd), "create": "echo first", "stdin": "old stdin",
           "delete": f'echo "old $PULUMI_COMMAND_STDOUT ${{SSH_CONNECTION##* }} $(cat)" >> {log}'}
    inputs, made = create(provider, COMMAND, "r", old)
    create(provider, COMMAND, "r", {"connection": conn(node), "create": "true", "delete": f"echo new >> {log}"})
    provider.Delete(provider_pb2.DeleteRequest(urn=urn(COMMAND, "r"), id=made.id, properties=made.properties,
                                               old_inputs=inputs))
    assert log.read_text() == f"old first {second_sshd} old stdin\n"


@pytest.fixture
def other_key(tmp_path) -> str:
    """A host key that is not the node's."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    return " ".join((tmp_path / "other.pub").read_text().split()[:2])


def test_a_host_key_that_does_not_match_is_refused(provider, node, other_key):
    marker = node.root / "ran"
    with pytest.raises(grpc.RpcError) as refused:
        create(provider, COMMAND, "k", {"connection": conn(node, hostKey=other_key, dialErrorLimit=0),
                                        "create": f"touch {marker}"})
    assert "after 0 failed attempts: ssh: handshake failed: ssh: host key mismatch" in refused.value.details()
    assert not marker.exists()


def test_a_proxy_is_dialled_first_with_its_own_pinned_key(provider, node, second_sshd, other_key):
    bastion = conn(node, second_sshd)["value"]
    _, made = create(provider, COMMAND, "j", {"connection": conn(node, proxy=bastion), "create": "echo via"})
    assert made.properties.fields["stdout"].string_value == "via"
    with pytest.raises(grpc.RpcError) as refused:
        create(provider, COMMAND, "j", {"connection": conn(node, proxy={**bastion, "hostKey": other_key,
                                                                         "dialErrorLimit": 0}), "create": "true"})
    assert refused.value.details().startswith("proxy: ")


def test_a_failing_command_fails_with_its_exit_code_and_output(provider, node):
    with pytest.raises(grpc.RpcError) as failed:
        create(provider, COMMAND, "f", {"connection": conn(node), "create": "echo out; echo broke >&2; exit 3"})
    assert failed.value.details().startswith('Process exited with status 3: running "echo out; echo broke >&2; exit 3"')
    assert "broke" in failed.value.details()


def test_dials_are_retried_up_to_the_limit(provider, node):
    closed = free_port()
    with pytest.raises(grpc.RpcError) as failed:
        create(provider, COMMAND, "c", {"connection": conn(node, closed, dialErrorLimit=2), "create": "true"})
    assert failed.value.details().startswith(f"after 2 failed attempts: dial tcp 127.0.0.1:{closed}: connect")


def test_copy_to_remote_copies_a_directory_into_an_existing_path(provider, node, second_sshd, tmp_path):
    local = tmp_path / "pkgs"
    (local / "sub").mkdir(parents=True)
    (local / "a.run").write_text("A")
    (local / "sub" / "b.txt").write_text("B")
    remote_dir = tmp_path / "remote"
    remote_dir.mkdir()
    source = {rpc._special_sig_key: rpc._special_archive_sig, "path": str(local), "hash": "h1"}
    props = {"connection": conn(node, second_sshd), "source": source, "remotePath": str(remote_dir)}
    inputs, made = create(provider, COPY, "cp", props)
    assert (remote_dir / "pkgs" / "a.run").read_text() == "A"
    assert (remote_dir / "pkgs" / "sub" / "b.txt").read_text() == "B"
    (remote_dir / "pkgs" / "a.run").unlink()
    for hash_, copied in (("h1", False), ("h2", True)):
        news = check(provider, COPY, "cp", {**props, "source": {**source, "hash": hash_}})
        provider.Update(provider_pb2.UpdateRequest(urn=urn(COPY, "cp"), olds=made.properties, news=news,
                                                   old_inputs=inputs))
        assert (remote_dir / "pkgs" / "a.run").exists() == copied
    text = {rpc._special_sig_key: rpc._special_asset_sig, "text": "hello", "hash": "t1"}
    create(provider, COPY, "txt", {**props, "source": text, "remotePath": str(remote_dir / "new" / "note.txt")})
    assert (remote_dir / "new" / "note.txt").read_text() == "hello"  # parents made, as copyTextContent does


def test_the_launcher_serves_on_the_port_it_prints(tmp_path):
    link = tmp_path / "pulumi-resource-command"
    link.symlink_to(LAUNCHER)
    plugin = subprocess.Popen([str(link), "127.0.0.1:1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env={**os.environ, "PYTHONPATH": ""})
    try:
        port = int(plugin.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = provider_pb2_grpc.ResourceProviderStub(channel).GetPluginInfo(empty_pb2.Empty())
        assert info.version == "1.2.1"
    finally:
        plugin.terminate()
        plugin.wait(timeout=10)
        plugin.stdout.close()


def test_the_launcher_copied_into_a_shared_plugin_cache_serves_the_clone_its_cli_names(tmp_path):
    """As `pulumi plugin install --file` leaves it: a copy outside every clone, found by ASCEND_NPU_REPO."""
    copy = tmp_path / "plugins" / "resource-command-v1.2.1" / "pulumi-resource-command"
    copy.parent.mkdir(parents=True)
    shutil.copy(LAUNCHER, copy)
    refused = subprocess.run([str(copy), "127.0.0.1:1"], capture_output=True, text=True, timeout=30,
                             env={k: v for k, v in os.environ.items() if k != "ASCEND_NPU_REPO"})
    assert refused.returncode == 1 and "set ASCEND_NPU_REPO" in refused.stderr, refused.stderr
    wrong = subprocess.run([str(copy), "127.0.0.1:1"], capture_output=True, text=True, timeout=30,
                           env={**os.environ, "ASCEND_NPU_REPO": str(tmp_path)})
    assert wrong.returncode == 1 and f"ASCEND_NPU_REPO={tmp_path} has no .venv" in wrong.stderr, wrong.stderr
    plugin = subprocess.Popen([str(copy), "127.0.0.1:1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env={**os.environ, "PYTHONPATH": "", "ASCEND_NPU_REPO": str(REPO)})
    try:
        assert int(plugin.stdout.readline()) > 0
    finally:
        plugin.terminate()
        plugin.wait(timeout=10)
        plugin.stdout.close()


LOCAL = "command:local:Command"


def test_a_local_command_runs_in_its_dir_with_its_environment_and_updates_with_the_previous_stdout(provider,
                                                                                                   tmp_path):
    """local/commandOutputs.go run: `/bin/sh -c`, `dir`, the provider's environment plus `environment`."""
    props = {"create": 'echo "$PWD $ASCEND_NPU_DRAIN_FOR"', "dir": str(tmp_path),
             "environment": {"ASCEND_NPU_DRAIN_FOR": "driver 24.1.rc2"}}
    inputs, made = create(provider, LOCAL, "drain", props)
    assert made.properties.fields["stdout"].string_value == f"{tmp_path} driver 24.1.rc2"
    news = {**props, "environment": {"ASCEND_NPU_DRAIN_FOR": "driver 24.1.rc3"}}
    changed = diff(provider, LOCAL, "drain", inputs, made.properties, news)
    assert list(changed.diffs) == ["environment"] and not changed.replaces  # an update, never a replace
    updated = provider.Update(provider_pb2.UpdateRequest(
        urn=urn(LOCAL, "drain"), olds=made.properties, news=check(provider, LOCAL, "drain", {
            **news, "create": 'echo "now $ASCEND_NPU_DRAIN_FOR, was $PULUMI_COMMAND_STDOUT"'}), old_inputs=inputs))
    assert updated.properties.fields["stdout"].string_value == \
        f"now driver 24.1.rc3, was {tmp_path} driver 24.1.rc2"


def test_a_local_delete_runs_the_stored_command_and_a_failure_says_exit_status(provider, tmp_path):
    log = tmp_path / "left"
    inputs, made = create(provider, LOCAL, "leave", {"create": "echo made", "delete": f"echo left >> {log}"})
    provider.Delete(provider_pb2.DeleteRequest(urn=urn(LOCAL, "leave"), id=made.id, properties=made.properties,
                                               old_inputs=inputs))
    assert log.read_text() == "left\n"
    with pytest.raises(grpc.RpcError) as failed:
        create(provider, LOCAL, "f", {"create": "echo out; echo broke >&2; exit 3"})
    assert failed.value.details().startswith('exit status 3: running "echo out; echo broke >&2; exit 3"')
    assert "broke" in failed.value.details()
