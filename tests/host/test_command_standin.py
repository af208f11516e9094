"""The pulumi-command stand-in driven over gRPC as the engine drives it: its local commands, and the remote types as
far as the program meets them (they dial nothing)."""
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
from pulumi_command import local

from engine.cache import REPO
from engine.command_standin import server
from tests.host.conftest import free_port

LAUNCHER = Path(server.__file__).with_name("pulumi-resource-command")
COMMAND, COPY, LOCAL = "command:remote:Command", "command:remote:CopyToRemote", "command:local:Command"
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


def test_a_remote_command_without_a_command_keeps_its_connection_secret_and_dials_nothing(provider, node):
    """The program's emptied `-on-destroy`: v1.2.1 runs nothing without a `create` (remote/commandController.go
    Create), and the stand-in holds its connection as v1.2.1 does: all of it secret, its defaults filled."""
    closed = free_port()
    inputs, made = create(provider, COMMAND, "n-on-destroy", {"connection": conn(node, closed),
                                                               "addPreviousOutputInEnv": False})
    assert made.id.startswith("n-on-destroy") and len(made.id) == len("n-on-destroy") + 8
    stored = made.properties.fields["connection"].struct_value
    assert stored.fields[rpc._special_sig_key].string_value == rpc._special_secret_sig
    hop = stored.fields["value"].struct_value.fields
    assert (hop["dialErrorLimit"].number_value, hop["perDialTimeout"].number_value) == (10, 15)  # connection.go
    assert hop["privateKey"].struct_value.fields[rpc._special_sig_key].string_value == rpc._special_secret_sig
    provider.Delete(provider_pb2.DeleteRequest(urn=urn(COMMAND, "n-on-destroy"), id=made.id,
                                               properties=made.properties, old_inputs=inputs))


@pytest.mark.parametrize("token, props", [
    (COMMAND, {"create": "true"}),
    (COPY, {"source": {rpc._special_sig_key: rpc._special_archive_sig, "path": "/tmp", "hash": "h"},
            "remotePath": "/var/tmp"}),
])
def test_a_remote_command_or_copy_that_would_dial_is_refused_never_faked(provider, node, token, props):
    """v1.2.1 would dial the node; the stand-in fails instead of pretending, naming the real provider's switch."""
    marker = node.root / "ran"
    with pytest.raises(grpc.RpcError) as refused:
        create(provider, token, "r", {"connection": conn(node), **props})
    assert "the command stand-in runs no remote command or copy (pulumi-command v1.2.1 would dial 127.0.0.1" in \
        refused.value.details() and "ASCEND_NPU_COMMAND_PROVIDER" in refused.value.details()
    assert not marker.exists()
    preview = create(provider, COMMAND, "p", {"connection": conn(node), "create": f"touch {marker}"}, preview=True)[1]
    assert preview.properties.fields["stdout"].string_value == rpc.UNKNOWN and not marker.exists()


def test_triggers_replace_and_a_new_create_command_updates_in_place(provider):
    props = {"create": "echo one", "triggers": ["a", "b"]}
    inputs, made = create(provider, LOCAL, "d", props)
    same = diff(provider, LOCAL, "d", inputs, made.properties, props)
    assert same.changes == provider_pb2.DiffResponse.DIFF_NONE
    added = diff(provider, LOCAL, "d", inputs, made.properties, {**props, "triggers": None})
    assert list(added.replaces) == ["triggers"] and added.detailedDiff["triggers"].kind == Kind.Value("DELETE_REPLACE")
    # An element is a nested path the provider calls an update; the SDK's replace_on_changes makes it a replace.
    element = diff(provider, LOCAL, "d", inputs, made.properties, {**props, "triggers": ["a", "c"]})
    assert dict(element.detailedDiff) == {"triggers[1]": provider_pb2.PropertyDiff(kind=Kind.Value("UPDATE"))}
    assert 'replace_on_changes=["triggers[*]"]' in inspect.getsource(local.Command._internal_init)
    changed = diff(provider, LOCAL, "d", inputs, made.properties, {**props, "create": "echo two"})
    assert changed.changes == provider_pb2.DiffResponse.DIFF_SOME and not changed.replaces
    assert list(changed.diffs) == ["create"]


def test_replace_deletes_with_the_old_delete_command_environment_and_stdin(provider, tmp_path):
    """local/commandController.go Delete runs the old state's delete with its environment and stdin."""
    log = tmp_path / "deleted"
    old = {"create": "echo first", "stdin": "old stdin", "environment": {"WHICH": "old"},
           "delete": f'echo "$WHICH $PULUMI_COMMAND_STDOUT $(cat)" >> {log}'}
    inputs, made = create(provider, LOCAL, "r", old)
    create(provider, LOCAL, "r", {"create": "true", "delete": f"echo new >> {log}", "environment": {"WHICH": "new"}})
    provider.Delete(provider_pb2.DeleteRequest(urn=urn(LOCAL, "r"), id=made.id, properties=made.properties,
                                               old_inputs=inputs))
    assert log.read_text() == "old first old stdin\n"


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
