"""The host runner's contract: every line and node command a release stored parses into the call its writer meant,
today's lines round-trip, and what no release wrote (or a newer one did) is refused, never guessed at."""
from __future__ import annotations

import shlex

import pytest

from components.runner.contract import (
    CONTRACT,
    LEGACY,
    MODULE,
    ON_DESTROY,
    ON_NODE,
    ContractError,
    Endpoint,
    RunnerCall,
    parse,
    parse_line,
)
from components.runner.on_node import NodeCall, runner_text
from components.runner.on_node import parse as parse_node
from tests.runner.stored import releases

PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDU0QpdHalnZ1zH3szZcOUbYzaVDzE+HZhT/Vx0zltGn"
BASTION_PIN = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHn7r0qzYk1x2mXQ0b8pZ7C6d2mJr2n7f3Xk9nBq3yZt"
# What each fixture stack is (tests/runner/stored/record.py).
TARGETS = {"root-agent": Endpoint("10.20.0.11", 22, "root", PIN),
           "sudo-key-bastion": Endpoint("10.20.0.11", 2222, "deploy", PIN)}
BASTIONS = {"root-agent": None, "sudo-key-bastion": Endpoint("bastion.example", 22, "jump", BASTION_PIN)}
SHA = "0ac485c7a5eb0c2514df341cbb70b132e496220c9a791e946cfbeca21b020e2a"


def runner_lines(stacks: dict):
    """(stack, resource, field, line) of every stored line that runs the host runner."""
    for stack, resources in stacks.items():
        for resource in resources:
            for field in ("create", "delete"):
                line = resource.get(field, "")
                if any(f"-m {module} " in line for module in (MODULE, *LEGACY)):
                    yield stack, resource, field, line


@pytest.mark.parametrize("commit", list(releases()))
def test_every_line_a_release_stored_parses_into_the_call_its_writer_meant(commit):
    stacks = releases()[commit]
    seen = set()
    for stack, resource, field, line in runner_lines(stacks):
        call = parse_line(line)
        seen.add((resource["name"], field))
        assert call.contract == 1 and call.node == "fake-npu-01"
        assert call.target == TARGETS[stack] and call.bastion == BASTIONS[stack]
        destroys = field == "delete"
        assert (call.step == "destroy") == destroys, (resource["name"], field)
        if resource["name"] == "reboot-wait":
            assert call.step == "reboot-wait" and call.timeout > 0
        # Contract 1's --agent: no key on stdin (a stack with useAgent, and from 9bf5a50 every step but the destroy).
        assert call.agent == ("--agent" in shlex.split(line))
    assert seen, "the release stored no line that runs the host runner"
    if commit in ("43e7d7f", "5c09365", "9bf5a50", "48a258d"):
        assert ("destroy", "delete") in seen


@pytest.mark.parametrize("commit", list(releases()))
def test_every_node_command_a_release_stored_parses_and_is_sent_as_it_was(commit):
    """Sent as today's runner text: byte for byte what the release sent, but for run_step.sh's advice on a failure
    (its one change since: tests/runner/stored/ and components/runner/on_node.py WRITTEN_OUT)."""
    for stack, resource, _, line in runner_lines(releases()[commit]):
        call = parse_line(line)
        held = resource.get("environment") if isinstance(resource.get("environment"), dict) else {}
        text = call.command or held.get(ON_DESTROY if call.step == "destroy" else ON_NODE)
        if text is None:
            continue
        found = parse_node(text)
        sent = found.text(call.target.user, call.step if call.step != "destroy" else "on-destroy")
        named = text.replace('"$ASCEND_NPU_RUN_STEP"', shlex.quote(runner_text("run_step"))).replace(
            '"$ASCEND_NPU_RUN_DESTROY"', shlex.quote(runner_text("run_destroy")))
        if found.runner == "run_destroy" or '"$ASCEND_NPU_RUN_STEP"' in text:
            assert sent == named, (commit, stack, resource["name"])
        else:
            assert shlex.split(sent)[-len(found.scripts) * 2:] == shlex.split(text)[-len(found.scripts) * 2:]
        assert dict(found.params).get("ASCEND_NODE", "fake-npu-01") == "fake-npu-01"


def test_todays_lines_round_trip_and_carry_the_contract():
    bastion = Endpoint("fe80::1", 2222, "jump", BASTION_PIN)
    for call in (RunnerCall("install", "npu-01", Endpoint("10.0.0.1", 22, "root", PIN), upload="ascend-packages"),
                 RunnerCall("destroy", "npu-01", Endpoint("npu-01.example", 2200, "deploy", PIN), bastion),
                 RunnerCall("reboot-wait", "npu-01", Endpoint("10.0.0.1", 22, "root", PIN), timeout=900)):
        assert parse_line(call.line()) == call
        assert f"-m {MODULE} {call.step} --contract {CONTRACT} " in call.line()
    assert "[fe80::1]:2222" in parse_line(RunnerCall("verify", "n", Endpoint("10.0.0.1", 22, "root", PIN),
                                                     bastion).line()).bastion.address


def test_todays_node_command_round_trips():
    call = NodeCall("run_step", (("on_destroy", SHA), ("uninstall", SHA)),
                    (("ASCEND_NODE", "npu-01"), ("ASCEND_MIRROR_URL", "https://m.example/a b"), ("ASCEND_GIVEN", "")))
    assert parse_node(call.stored()) == call
    assert call.stored().startswith(f"ascend-npu on_destroy {SHA} uninstall {SHA} ASCEND_NODE=npu-01 ")


@pytest.mark.parametrize("argv, said", [
    (["install", "--contract", str(CONTRACT + 1), "--node", "n", "--address", "h:22", "--user", "root",
      "--host-key", PIN], f"contract {CONTRACT + 1}, which this program"),
    (["install", "--contract", "1", "--node", "n", "--address", "h:22", "--user", "root", "--host-key", PIN],
     "contract 1, which this program"),
    (["install", "--node", "n", "--address", "h:22", "--user", "root", "--host-key", PIN], "--contract"),
    (["format-disks", "--contract", "2", "--node", "n", "--address", "h:22", "--user", "root", "--host-key", PIN],
     "invalid choice"),
    (["install", "--contract", "2", "--node", "n", "--address", "h:22", "--user", "root"], "--host-key"),
    (["install", "--contract", "2", "--node", "n", "--address", "h", "--user", "root", "--host-key", PIN],
     "`h` is no HOST:PORT"),
    (["verify", "--contract", "2", "--node", "n", "--address", "h:22", "--user", "root", "--host-key", PIN,
      "--bastion", "b:22"], "--bastion without --bastion-host-key"),
])
def test_a_line_no_release_wrote_is_refused_saying_why(argv, said):
    with pytest.raises(ContractError) as refused:
        parse(MODULE, argv)
    assert said in str(refused.value)


def test_a_line_of_another_module_or_a_legacy_step_no_release_had_is_refused():
    with pytest.raises(ContractError, match="no host runner"):
        parse_line("exec python -m components.drain leave --contract 2 --node n")
    with pytest.raises(ContractError, match="no host step"):
        parse("components.host.node_step", ["--step", "wipe", "--node", "n", "--address", "h:22", "--user", "root",
                                            "--host-key", PIN])


@pytest.mark.parametrize("text, said", [
    ("", "it is empty"),
    ('bash -c "$ASCEND_NPU_RUN_WIPE" ascend-npu fake-npu-01', "calls $ASCEND_NPU_RUN_WIPE on the node, a runner this "
                                                              "release does not know"),
    ('bash -c "$ASCEND_NPU_RUN_DESTROY" ascend-npu', "run_destroy takes the node's name alone"),
    ("bash -c 'rm -rf /var/lib/ascend-npu' ascend-npu fake-npu-01", "a runner this release does not know"),
    ("bash -c " + shlex.quote("x" * 500) + " ascend-npu n", "a script of 500 bytes (sha256 "),
    (f"ascend-npu install {SHA[:40]} ASCEND_NODE=n", "not STEP SHA256 pairs"),
    (f"ascend-npu install {SHA} NODE=n", "a parameter is not one ASCEND_NAME=VALUE line"),
    ("rm -rf /", "neither `ascend-npu STEP SHA256 ...` nor"),
    ("bash -c 'unterminated", "does not parse as shell words"),
])
def test_a_node_command_no_release_wrote_is_refused(text, said):
    with pytest.raises(ContractError) as refused:
        parse_node(text)
    assert said in str(refused.value)
