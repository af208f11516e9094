"""Connections as pulumi-command v1.2.1 leaves them, in the stand-in: a remote command's client stays open, a copy
closes its target client, a bastion (proxy) client is never closed; all of them until the plugin exits.

Simulated: nothing; the node and the bastion are real sshds, the calls are the engine's.
"""
from __future__ import annotations

from engine.command_standin import ssh
from tests.host.test_command_standin import COMMAND, COPY, conn, create, rpc


def copy_props(node, tmp_path, connection) -> dict:
    (tmp_path / "pkgs").mkdir(exist_ok=True)
    (tmp_path / "pkgs" / "a.run").write_text("A")
    (tmp_path / "remote").mkdir(exist_ok=True)
    source = {rpc._special_sig_key: rpc._special_archive_sig, "path": str(tmp_path / "pkgs"), "hash": "h1"}
    return {"connection": connection, "source": source, "remotePath": str(tmp_path / "remote")}


def test_commands_keep_their_connection_copies_close_theirs(provider, node, tmp_path):
    before = ssh.held_open()
    for name in ("install", "verify"):
        create(provider, COMMAND, name, {"connection": conn(node), "create": "true"})
    assert ssh.held_open() == before + 2
    create(provider, COPY, "scripts", copy_props(node, tmp_path, conn(node)))
    assert ssh.held_open() == before + 2


def test_through_a_bastion_every_step_keeps_its_bastion_connection(provider, node, second_sshd,
                                                                   tmp_path):
    bastion = conn(node, second_sshd)["value"]
    through = conn(node, proxy=bastion)
    before = ssh.held_open()
    create(provider, COMMAND, "install", {"connection": through, "create": "true"})
    assert ssh.held_open() == before + 2  # the bastion's and the node's
    create(provider, COPY, "scripts", copy_props(node, tmp_path, through))
    assert ssh.held_open() == before + 3  # the copy's bastion connection stays, its node's closes
