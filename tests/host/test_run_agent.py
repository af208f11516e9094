"""The SSH agents steps log in through (components/runner/agent.py: the run's, components/host/run_agent.py, and the
one a step with the key on its stdin starts) with OpenSSH's own ssh-agent and ssh-add, and a step through it against
the fake node's real sshd. Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import suppress
from pathlib import Path

import pytest

from components.host import run_agent, script_set
from components.host.run_agent import socket_path
from components.runner import agent as agents
from components.runner.agent import AGENT_ENV, AgentError
from tests.host.test_node_step import REPO, local_step, spec_for


def listed(path: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh-add", "-l"], env={**os.environ, AGENT_ENV: path}, capture_output=True, text=True)


def gone(pid: int, why: str, within: float = 5) -> None:
    """PID exits (or is a zombie) within WITHIN seconds."""
    deadline = time.monotonic() + within
    while Path(f"/proc/{pid}").exists():
        with suppress(FileNotFoundError):
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return
        assert time.monotonic() < deadline, why
        time.sleep(0.05)


def new_key(folder: Path, passphrase: str = "") -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", "stack-key", "-f",
                    str(folder / "key")], check=True)
    return (folder / "key").read_text()


@pytest.fixture
def in_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    run_agent.stop()


def test_the_agent_holds_the_stack_key_in_a_private_folder_and_goes_with_its_socket(in_folder):
    path = socket_path("ascend-npu", "prod")
    run_agent.ensure(path, new_key(in_folder / ".", "").rstrip("\n"))  # a key set without its last line break
    assert "stack-key (ED25519)" in listed(path).stdout
    assert (in_folder / path).parent.stat().st_mode & 0o777 == 0o700
    agent = run_agent._RUNNING[path]
    run_agent.stop()
    assert agent.watch.poll() is not None and not (in_folder / path).exists()
    gone(agent.pid, "the agent outlived stop()")
    assert listed(path).returncode == 2  # no agent answers there any more


def test_a_socket_left_by_a_killed_run_is_replaced(in_folder):
    path = socket_path("ascend-npu", "prod")
    (in_folder / path).parent.mkdir(parents=True)
    (in_folder / path).write_text("")
    run_agent.ensure(path, new_key(in_folder))
    assert listed(path).returncode == 0


def test_a_key_with_a_passphrase_is_refused_by_name_and_leaves_no_agent(in_folder):
    path = socket_path("ascend-npu", "prod")
    with pytest.raises(AgentError) as caught:
        run_agent.ensure(path, new_key(in_folder, "a-passphrase"))
    assert str(caught.value).startswith("sshPrivateKey: ssh-add could not load it")
    assert str(caught.value).endswith("no install, verify or NPU network step ran")
    assert "a-passphrase" not in str(caught.value) and "PRIVATE KEY" not in str(caught.value)
    assert run_agent._RUNNING == {} and not (in_folder / path).exists()


def test_each_stack_of_a_folder_has_its_own_socket_and_the_path_names_no_checkout():
    paths = {socket_path("ascend-npu", stack) for stack in ("dev", "prod", "org/prod")}
    assert len(paths) == 3 and all(p.startswith(".ascend-npu/agent/") and len(p) < 64 for p in paths)


def test_the_agent_dies_with_the_program_however_it_ends(tmp_path):
    """A program killed with SIGKILL runs no exit handler: its agent goes all the same, once it sees the shell it
    watches gone (at its next wakeup, within 10 s: ssh-agent.c L2246)."""
    key = new_key(tmp_path)
    program = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from components.runner import agent
        print(agent.start("agent.sock", sys.stdin.read()).pid, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", program], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    proc.stdin.write(key)
    proc.stdin.close()
    agent = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    gone(agent, "the agent outlived the program", within=20)


def test_an_install_reaches_the_node_through_the_runs_agent_with_nothing_on_stdin(node, in_folder):
    """The install as the component writes it when the stack has a key: the run's socket in the environment, no
    stdin; run by `/bin/sh -c` in the project folder as pulumi-command v1.2.1 runs it."""
    spec = spec_for(node)
    path = socket_path("ascend-npu", "prod")
    run_agent.ensure(path, spec.ssh_private_key)
    script_set._rendered.cache_clear()  # a program renders its scripts in its own folder, as this one does here
    command, environment = local_step(spec, "install")
    env = {k: v for k, v in os.environ.items() if k != AGENT_ENV}
    done = subprocess.run(["/bin/sh", "-c", command], cwd=in_folder, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120, env={**env, **environment, AGENT_ENV: path,
                                                       "ASCEND_NPU_PYTHON": sys.executable,
                                                       "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert "[install] log on the node" in done.stdout


def test_a_step_with_the_key_on_stdin_holds_it_in_an_agent_of_its_own_that_goes_with_it(tmp_path):
    """The destroy's route (its delete runs without the program): an agent started for the step, which answers
    while the step runs and is gone, socket and folder, once it ends, however SSH_AUTH_SOCK read before."""
    with agents.holding(new_key(tmp_path)) as path:
        assert "stack-key (ED25519)" in listed(path).stdout
        folder = Path(path).parent
        assert folder.stat().st_mode & 0o777 == 0o700
    assert not folder.exists() and listed(path).returncode == 2
