"""A host step as the stack runs it: the local command line step_command() writes, run by `/bin/sh -c` as
pulumi-command v1.2.1's local.Command runs it (provider/pkg/provider/local/commandOutputs.go L43-59), the key on
stdin, against the fake node's real sshd. Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import dataclasses
import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from components.host.commands import host_steps, node_packages
from components.host.component import uploads
from components.host.step_runner import destroy_command, step_command
from components.runner import dialing
from components.runner import run as runner
from components.runner.contract import MODULE, ON_NODE
from components.runner.dialing import DIAL_ATTEMPTS
from components.runner.openssh import Streamed
from components.runner.run import dial
from tests.host.conftest import free_port
from tests.host.test_host_install import installed

REPO = Path(__file__).resolve().parents[2]


def spec_for(node, port: int | None = None, **options):
    """The fake node's stack, dialled on PORT (its sshd's by default) with the stack's key."""
    spec = node.spec(**options)
    key = (node.ssh_dir / "client_key").read_text()
    ssh = spec.ssh.model_copy(update={"port": port or node.port, "use_agent": False})
    return dataclasses.replace(spec, ssh=ssh, ssh_private_key=key)


def run(spec, step: str = "install", login: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The step's local command as the provider runs it: `/bin/sh -c`, the program's folder, stdin as the stack
    sends it (the key, and the mirror login for an install)."""
    command, environment = local_step(spec, step)
    stdin = json.dumps({"key": spec.ssh_private_key, **({"stdin": login} if login else {})})
    return subprocess.run(["/bin/sh", "-c", command], cwd=REPO, input=stdin, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **environment, "ASCEND_NPU_PYTHON": sys.executable})


def local_step(spec, step: str) -> tuple[str, dict]:
    """The step's local command and environment, as the component gives them to local.Command (the run's agent
    aside: run() gives the key on stdin, as the destroy step has it)."""
    staging, upload = uploads(spec)
    steps = host_steps(spec, spec.nodes[0], staging_dir=staging)
    return step_command(spec, spec.nodes[0], steps[step], upload if step == "install" else "")


def connections_to(port: int) -> int:
    """Established TCP connections from this machine to PORT (/proc/net/tcp: state 01)."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01" and int(fields[2].split(":")[1], 16) == port:
            count += 1
    return count


def test_install_stages_its_scripts_and_the_nodes_packages_then_runs_and_holds_no_connection(node):
    spec = spec_for(node)
    done = run(spec)
    assert done.returncode == 0, done.stderr
    assert "[install] log on the node" in done.stdout
    staged = node.path("/var/tmp/" + Path(spec.packages.directory).name)
    assert sorted(p.name for p in staged.iterdir()) == sorted(p.file for p in node_packages(spec, spec.nodes[0]))
    assert len(list(Path(spec.packages.directory).iterdir())) > len(list(staged.iterdir()))  # other chips' files
    assert sorted(p.name for p in node.path("/var/tmp/ascend-npu-scripts").iterdir()) == ["install.sh"]
    assert connections_to(node.port) == 0


def test_a_rerun_sends_nothing_and_touches_no_staged_file(node):
    spec = spec_for(node)
    assert run(spec).returncode == 0
    staged = [p for p in node.path("/var/tmp").rglob("*") if p.is_file()]
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in staged}
    time.sleep(0.05)
    again = run(spec)
    assert again.returncode == 0, again.stderr
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in staged} == before


def test_a_damaged_staged_file_is_sent_again(node):
    spec = spec_for(node)
    assert run(spec).returncode == 0
    script = node.path("/var/tmp/ascend-npu-scripts/verify.sh")
    assert not script.exists()  # the install step stages its own script only
    installer = next(node.path("/var/tmp").glob("*/*.run"))
    installer.write_text("damaged\n")
    assert run(spec).returncode == 0
    assert installer.read_text() != "damaged\n"


def test_the_command_exit_code_and_its_stderr_come_through(node):
    spec = spec_for(node)
    done = run(spec, "verify")  # nothing installed: verify says what is missing and fails
    assert done.returncode not in (0, 255)
    assert "[verify]" in done.stderr


def test_an_unpinned_host_key_is_refused_at_once_and_nothing_runs(node):
    spec = spec_for(node)
    other = dataclasses.replace(spec.nodes[0], host_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/"
                                "CrC5WBLnQM/KP6qx/EIDhhUqiAFi")
    wrong = dataclasses.replace(spec, nodes=(other,))
    started = time.monotonic()
    done = run(wrong)
    assert done.returncode == 255
    assert "[install] node fake-npu-01: ssh refused (" in done.stderr and "Host key verification failed" in done.stderr
    assert "nothing on the node was changed" in done.stderr
    assert time.monotonic() - started < 30  # one dial, no retries
    assert not node.path("/var/tmp/ascend-npu-scripts").exists()


def test_dials_are_retried_until_the_node_answers_and_stop_at_the_limit():
    tries, slept, said = [], [], []
    down = Streamed(255, False, "ssh: connect to host 10.0.0.1 port 22: Connection refused")
    up = Streamed(0, True, "")
    answers = [down, down, up]
    assert dial(lambda: tries.append(1) or answers[len(tries) - 1], "install", "n1", said.append, slept.append) == up
    assert len(tries) == 3 and slept == [1.0, 2.0] and "dialing again in 1 s" in said[0]
    tries.clear()
    assert dial(lambda: tries.append(1) or down, "install", "n1", said.append, slept.append) == down
    assert len(tries) == DIAL_ATTEMPTS


def test_a_step_that_printed_is_never_dialled_again():
    """The connection died after the step started: running it again could run an installer twice."""
    tries = []
    dropped = Streamed(255, True, "Connection to 10.0.0.1 closed by remote host.")
    assert dial(lambda: tries.append(1) or dropped, "install", "n1", print, lambda s: None) == dropped
    assert len(tries) == 1


def test_a_closed_port_fails_with_the_reason_after_the_retries(node, monkeypatch, capsys):
    """The runner's own main with fewer dials (the real count waits about 40 s): the words the step fails with."""
    monkeypatch.setattr(dialing, "DIAL_ATTEMPTS", 2)
    spec = spec_for(node, port=free_port())
    command, environment = local_step(spec, "verify")
    argv = shlex.split(command)
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"key": spec.ssh_private_key})))
    monkeypatch.setenv(ON_NODE, environment[ON_NODE])
    monkeypatch.chdir(REPO)
    assert runner.main(MODULE, argv[argv.index(MODULE) + 1:]) == 255
    said = capsys.readouterr().err
    assert "dialing again in 1 s" in said and "Connection refused" in said
    assert "[verify] node fake-npu-01: not reached after 2 dials" in said and "nothing on the node was changed" in said


def test_a_machine_out_of_open_files_fails_the_step_at_once_saying_so(node):
    """The open-file limit of the shell that runs pulumi, far too low: the step ends with the reason, never hangs."""
    spec = spec_for(node)
    command, environment = local_step(spec, "install")
    done = subprocess.run(["prlimit", "--nofile=9:9", "/bin/sh", "-c", command], cwd=REPO,
                          input=json.dumps({"key": spec.ssh_private_key}), capture_output=True, text=True,
                          timeout=60, env={**os.environ, **environment, "ASCEND_NPU_PYTHON": sys.executable})
    assert done.returncode == 255, done.stderr
    assert "[install] node fake-npu-01: this machine ran out of open files starting ssh" in done.stderr, done.stderr
    assert "ulimit -n" in done.stderr and "nothing on the node was changed" in done.stderr
    assert not node.path("/var/tmp/ascend-npu-scripts").exists()


def test_the_destroy_step_records_then_its_delete_does_what_the_record_says(node):
    """Its delete as v1.2.1 runs it: the stored command, environment and stdin (local/commandController.go L93-99)."""
    spec = spec_for(node, uninstall=True)
    assert run(spec).returncode == 0
    assert run(spec, "on_destroy").returncode == 0  # the -destroy step's create: the record
    staging, _ = uploads(spec)
    _, environment = local_step(spec, "on_destroy")
    delete = destroy_command(spec, spec.nodes[0])
    done = subprocess.run(["/bin/sh", "-c", delete], cwd=REPO, input=json.dumps({"key": spec.ssh_private_key}),
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **environment, "ASCEND_NPU_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr
    assert installed(node, "driver") is None and installed(node, "dockerRuntime") is None
    assert connections_to(node.port) == 0
