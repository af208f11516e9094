"""The upload directory the engine hashes: checked before any resource is registered, by field, never a traceback."""
from __future__ import annotations

import socket

from components.config import parse_stack
from components.config.local_files import agent_problems, local_file_problems, openssh_problems
from tests.stacks import load_stack

DEV = {k.split(":", 1)[1]: v for k, v in load_stack("dev")["config"].items()}


def spec():
    return parse_stack(DEV, private_key=None)


def test_a_missing_upload_directory_is_named_with_where_it_was_looked_for(tmp_path):
    problems = local_file_problems(spec(), tmp_path)
    assert [p.field for p in problems] == ["packages.directory"]
    assert str(tmp_path / "ascend-packages") in problems[0].message


def test_each_listed_file_missing_from_the_directory_is_named_by_its_entry(tmp_path):
    (tmp_path / "ascend-packages").mkdir()
    files = [f["file"] for f in DEV["packages"]["files"]]
    (tmp_path / "ascend-packages" / files[1]).write_text("#!/bin/bash\n")
    problems = local_file_problems(spec(), tmp_path)
    assert [p.field for p in problems] == [f"packages.files[{i}].file" for i in range(len(files)) if i != 1]
    assert files[0] in problems[0].message


def test_a_complete_directory_and_a_mirror_stack_have_no_problem(tmp_path):
    (tmp_path / "ascend-packages").mkdir()
    for entry in DEV["packages"]["files"]:
        (tmp_path / "ascend-packages" / entry["file"]).write_text("#!/bin/bash\n")
    assert local_file_problems(spec(), tmp_path) == []
    mirror = {**DEV, "packages": {**DEV["packages"], "source": "mirror", "mirrorUrl": "https://mirror.example/ascend"}}
    mirror["packages"].pop("directory")
    assert local_file_problems(parse_stack(mirror, private_key=None), tmp_path) == []


def test_an_agent_is_asked_for_only_by_an_up_of_a_stack_that_logs_in_with_it(tmp_path):
    """With sshPrivateKey the steps load the key into an agent of their own, so this machine's SSH_AUTH_SOCK, live,
    stale or absent, is no concern; with ssh.useAgent an `up` needs an agent where SSH_AUTH_SOCK points, a preview
    (which dials nothing) does not."""
    keyed = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": False}}, private_key="KEY",
                        private_key_is_secret=True)
    agent = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": True}}, private_key=None)
    live = tmp_path / "agent.sock"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(live))
        for environ in ({}, {"SSH_AUTH_SOCK": str(live)}, {"SSH_AUTH_SOCK": str(tmp_path / "gone.sock")}):
            assert agent_problems(keyed, environ) == agent_problems(keyed, environ, "preview") == []
        assert agent_problems(agent, {"SSH_AUTH_SOCK": str(live)}) == []
    assert [p.field for p in agent_problems(agent, {})] == ["ssh.useAgent"]
    stale = agent_problems(agent, {"SSH_AUTH_SOCK": str(tmp_path / "gone.sock")})
    assert [p.field for p in stale] == ["ssh.useAgent"] and "where no agent listens" in stale[0].message
    assert agent_problems(agent, {}, "preview") == []


def test_every_stack_with_nodes_needs_the_openssh_client_here():
    keyed = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": False}}, private_key="KEY",
                        private_key_is_secret=True)
    agent = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": True}}, private_key=None)
    assert openssh_problems(keyed, lambda tool: f"/usr/bin/{tool}") == []
    [problem] = openssh_problems(agent, lambda tool: None)
    assert problem.field == "nodes" and "no `ssh` on PATH" in problem.message and "openssh-client" in problem.message
    [problem] = openssh_problems(keyed, lambda tool: None if tool == "ssh-add" else f"/usr/bin/{tool}")
    assert "no `ssh-add` on PATH" in problem.message
    assert openssh_problems(agent, lambda tool: None if tool == "ssh-agent" else "/usr/bin/x") == []

