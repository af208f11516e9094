"""Host key pins of every type OpenSSH serves, RSA among them, pinned the way docs/before-you-start.md says (paste
the line `ssh-keyscan -t TYPE -p PORT ADDRESS` prints), and a node's steps run through the host runner against
Debian's sshd serving that key alone. OpenSSH's client negotiates an RSA key's SHA-2 signatures (rsa-sha2-512,
rsa-sha2-256) from a known_hosts line typed `ssh-rsa`: V_9_2_P1 sshconnect2.c L122-218, order_hostkeyalgs.
Simulated: the node's NPUs and installers (testkit/fakenode)."""
from __future__ import annotations

import dataclasses
import re
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from components.config import parse_stack
from components.runner.contract import Endpoint
from components.runner.openssh import key_type, known_host
from testkit.fakenode.node import SSHD
from testkit.fakenode.packages import stack_config
from testkit.fakenode.sshd import wait_listening
from tests.host.conftest import free_port
from tests.host.test_host_install import installed
from tests.host.test_node_step import run, spec_for


@contextmanager
def sshd_serving(node, tmp_path: Path, kind: str) -> Iterator[tuple[int, Path]]:
    """The node's sshd config on another port, serving a host key of KIND alone, logging each key exchange; its port
    and its log."""
    port, key = free_port(), tmp_path / f"host_{kind}"
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(key)], check=True)
    kept = [line for line in (node.ssh_dir / "sshd_config").read_text().splitlines()
            if not line.startswith(("Port ", "HostKey "))]
    config, log = tmp_path / f"sshd_config_{kind}", tmp_path / f"sshd_{kind}.log"
    config.write_text("\n".join([f"Port {port}", f"HostKey {key}", *kept, "LogLevel DEBUG1", ""]))
    with log.open("w") as out:
        sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=out, stderr=out)
    try:
        wait_listening(sshd, "127.0.0.1", port, log)
        yield port, log
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)


def keyscan(kind: str, port: int) -> str:
    """The line `ssh-keyscan -t KIND -p PORT 127.0.0.1` prints, as a user pastes it into the stack."""
    done = subprocess.run(["ssh-keyscan", "-t", kind, "-p", str(port), "127.0.0.1"], capture_output=True, text=True,
                          timeout=30)
    lines = [line for line in done.stdout.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1, done.stdout + done.stderr
    return lines[0]


@pytest.mark.parametrize("kind", ["rsa", "ecdsa", "ed25519"])
def test_a_node_pinned_by_its_keyscan_line_is_reached_over_real_ssh_and_an_rsa_one_installed(node, tmp_path, kind):
    """The RSA-pinned node is installed and verified; the others run their destroy record, a step that dials alike
    (the one connection every step opens) without the installers' time."""
    with sshd_serving(node, tmp_path, kind) as (port, log):
        line = keyscan(kind, port)
        raw = stack_config(node.packages, line.replace("[127.0.0.1]:%d" % port, "127.0.0.1"))
        raw["ssh"] = {"user": "root", "port": port, "useAgent": True}
        pinned = parse_stack(raw).nodes[0].host_key
        assert pinned == " ".join(line.split()[1:3])
        spec = spec_for(node, port=port)
        spec = dataclasses.replace(spec, nodes=(dataclasses.replace(spec.nodes[0], host_key=pinned),))
        if kind != "rsa":
            done = run(spec, "on_destroy")
            assert done.returncode == 0 and "on destroy: keep the software" in done.stdout, done.stderr
        else:
            done = run(spec)
            assert done.returncode == 0, done.stderr
            assert installed(node, "driver") and run(spec, "verify").returncode == 0
    # The signature the key exchange settled on (sshd's debug line, V_9_2_P1 kex.c L866): never the SHA-1 `ssh-rsa`.
    chosen = set(re.findall(r"kex: host key algorithm: (\S+)", log.read_text()))
    assert chosen == ({"rsa-sha2-512"} if kind == "rsa" else {pinned.split()[0]}), chosen


def test_an_rsa_key_under_a_signature_label_is_pinned_as_its_key_type(node):
    rsa = "AAAAB3NzaC1yc2EAAAADAQABAAABAQDtEXVDfo/jzMq6kFQeWePHhGk4OvUwNJ2cjxV/4F6EDpE5LeBL7ztEHJHNsoqWkCfy/521" \
          "LR+xKBu4hnCAvujZnsuuRULBHaJ9FVArDCJwzqQWHo1+/Fx6D1BNVAWZuntxnniMuGzIZuSqTqGzqeC/dCPXBKXsJYXE9gqf891y" \
          "DzGN1eSmbLYkpan8GKbbfUXi+WhkkChIgBYpGmAw5QY4uQ9AqUWMTBp5UtyuBhENdpTQoTEtOWX0s/ZkDhkxkYLAGLR4kHxhw4KZ" \
          "Wi0NexuUgV3P1b4q62AgnLIcobmAMlI9tWqKB1AHozyh51nKx4Ch5rP1igsOYyt9EmMp1SP1"
    for label in ("ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"):
        assert parse_stack(stack_config(node.packages, f"{label} {rsa}")).nodes[0].host_key == f"ssh-rsa {rsa}"
        assert key_type(f"{label} {rsa}") == "ssh-rsa"
    assert known_host(Endpoint("h", 2222, "root", f"rsa-sha2-512 {rsa}")) == f"[h]:2222 ssh-rsa {rsa}\n"
    assert re.match(r"^h ssh-ed25519 ", known_host(Endpoint("h", 22, "root", node.host_key)))
