"""A stack that releases before 43e7d7f rolled out with remote commands, taken over by this one: their remote destroy
is cleared without running, and their remote steps leave the state without running or dialing anything (what their
stored destroys do when replayed: tests/runner/test_stored_destroy.py).

The provider calls go to the pulumi-command stand-in over gRPC (engine/command_standin), which follows v1.2.1:
Update runs `update`, else `create`, and nothing when neither is set; Delete runs nothing without a `delete`; a
CopyToRemote has no Delete (provider/pkg/provider/remote/commandController.go Update, Delete; copyController.go).
Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

from pulumi.runtime.proto import provider_pb2

from tests.host.conftest import free_port
from tests.host.test_command_standin import COMMAND, COPY, check, conn, struct, urn
from tests.runner.stored import releases, resource

STORED = resource(releases()["727ce57"], "root-agent", "on-destroy")


def test_the_old_on_destroy_updated_to_no_command_runs_nothing_and_keeps_no_delete(provider, node, tmp_path):
    """Its connection points at a closed port: a dial would fail the update. Once updated, its delete runs nothing
    either: the destroy is the local step's alone."""
    marker = tmp_path / "ran"
    closed = conn(node, free_port(), dialErrorLimit=0)
    olds = {"connection": closed, "create": f"touch {marker}", "delete": STORED["delete"],
            "addPreviousOutputInEnv": False, "stdout": "", "stderr": ""}
    news = check(provider, COMMAND, "n-on-destroy", {"connection": closed, "addPreviousOutputInEnv": False})
    updated = provider.Update(provider_pb2.UpdateRequest(urn=urn(COMMAND, "n-on-destroy"), id="x", olds=struct(olds),
                                                         news=news, old_inputs=struct(olds)))
    assert not marker.exists()
    kept = dict(updated.properties)
    assert "create" not in kept and "delete" not in kept
    provider.Delete(provider_pb2.DeleteRequest(urn=urn(COMMAND, "n-on-destroy"), id="x", properties=updated.properties,
                                               old_inputs=news))


def test_the_old_install_verify_and_copies_are_deleted_without_a_dial(provider, node, tmp_path):
    closed = conn(node, free_port(), dialErrorLimit=0)
    for token, name, state in (
            (COMMAND, "n-install", {"connection": closed, "create": "false", "stdout": "", "stderr": ""}),
            (COMMAND, "n-verify", {"connection": closed, "create": "false", "triggers": ["a"], "stdout": "",
                                   "stderr": ""}),
            (COPY, "n-scripts", {"connection": closed, "remotePath": "/var/tmp", "triggers": ["root@x:22"]})):
        provider.Delete(provider_pb2.DeleteRequest(urn=urn(token, name), id="x", properties=struct(state),
                                                   old_inputs=struct(state)))
