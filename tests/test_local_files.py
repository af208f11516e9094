"""The upload directory the engine hashes: checked before any resource is registered, by field, never a traceback."""
from __future__ import annotations

from components.config import parse_stack
from components.config.local_files import agent_problems, local_file_problems
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


def test_the_agent_is_used_only_when_the_stack_says_so():
    """pulumi-command v1.2.1 dials SSH_AUTH_SOCK whenever it is non-empty, even beside sshPrivateKey, and a stale one
    fails every step, though the agent's keys are never offered beside the stack's."""
    keyed = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": False}}, private_key="KEY",
                        private_key_is_secret=True)
    agent = parse_stack({**DEV, "ssh": {**DEV["ssh"], "useAgent": True}}, private_key=None)
    assert [p.field for p in agent_problems(keyed, {"SSH_AUTH_SOCK": "/run/user/0/agent.sock"})] == ["sshPrivateKey"]
    assert "SSH_AUTH_SOCK= pulumi up" in agent_problems(keyed, {"SSH_AUTH_SOCK": "/tmp/a"})[0].message
    # The reason is what v1.2.1 does: it never offers the agent's keys, and a stale socket fails every dial.
    reason = agent_problems(keyed, {"SSH_AUTH_SOCK": "/tmp/a"})[0].message
    assert "never offer its keys" in reason and "stale SSH_AUTH_SOCK) fails every step" in reason
    assert "let in" not in reason
    # It names the command the user ran: a preview is refused with a preview to rerun.
    assert "SSH_AUTH_SOCK= pulumi preview`" in agent_problems(keyed, {"SSH_AUTH_SOCK": "/tmp/a"}, "preview")[0].message
    assert agent_problems(keyed, {"SSH_AUTH_SOCK": ""}) == agent_problems(keyed, {}) == []
    assert [p.field for p in agent_problems(agent, {})] == ["ssh.useAgent"]
    assert agent_problems(agent, {"SSH_AUTH_SOCK": "/tmp/a"}) == []
