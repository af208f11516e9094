"""Host key pins against Debian's OpenSSH sshd, dialled as pulumi-command v1.2.1 dials: RSA fails, ed25519 and ecdsa
work. v1.2.1 offers only the pinned key's type (provider/pkg/provider/remote/connection.go:88-98), `ssh-rsa` for any
RSA key (golang.org/x/crypto v0.48.0 ssh/keys.go:224-231,457-459), the SHA-1 signature OpenSSH 8.8 dropped."""
from __future__ import annotations

import re
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import grpc
import pytest

from components.config import SpecError, parse_stack
from testkit.fakenode.node import SSHD
from testkit.fakenode.packages import stack_config
from testkit.fakenode.sshd import wait_listening
from tests.host.conftest import free_port
from tests.host.test_command_standin import COMMAND, conn, create

NO_SHA1 = ("ssh: handshake failed: ssh: no common algorithm for host key; we offered: [ssh-rsa], "
           "peer offered: [rsa-sha2-")


@contextmanager
def sshd_with_host_keys(node, tmp_path: Path, kinds: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """The node's sshd config on another port, serving host keys of KINDS only; the port and each key's pin."""
    port, pins, keys = free_port(), {}, []
    for kind in kinds:
        key = tmp_path / f"host_{kind}"
        subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(key)], check=True)
        pins[kind] = " ".join(Path(f"{key}.pub").read_text().split()[:2])
        keys.append(f"HostKey {key}")
    kept = [line for line in (node.ssh_dir / "sshd_config").read_text().splitlines()
            if not line.startswith(("Port ", "HostKey "))]
    config, log = tmp_path / "sshd_config_keys", tmp_path / "sshd_keys.log"
    config.write_text("\n".join([f"Port {port}", *keys, *kept, ""]))
    with log.open("w") as out:
        sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=out, stderr=out)
    try:
        wait_listening(sshd, "127.0.0.1", port, log)
        yield port, pins
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)


def sshd_version() -> tuple[int, int]:
    said = subprocess.run([SSHD, "-V"], capture_output=True, text=True).stderr
    found = re.search(r"OpenSSH_(\d+)\.(\d+)", said)
    assert found, said
    return int(found[1]), int(found[2])


def test_an_rsa_pin_cannot_reach_a_current_sshd_the_way_v121_dials(provider, node, tmp_path):
    assert sshd_version() >= (8, 8), "this proof needs OpenSSH 8.8 or later, which refuses ssh-rsa signatures"
    marker = node.root / "ran"
    with sshd_with_host_keys(node, tmp_path, ("rsa",)) as (port, pins):
        blob = pins["rsa"].split()[1]
        for label in ("ssh-rsa", "rsa-sha2-256"):  # the label is ignored: an RSA key is offered as ssh-rsa alone
            with pytest.raises(grpc.RpcError) as refused:
                create(provider, COMMAND, "rsa", {"connection": conn(node, port, hostKey=f"{label} {blob}",
                                                                     dialErrorLimit=0), "create": f"touch {marker}"})
            assert NO_SHA1 in refused.value.details(), refused.value.details()
        # The key itself is sound: OpenSSH's own client, offering the SHA-2 signatures, logs in with the same pin.
        known = tmp_path / "known_rsa"
        known.write_text(f"[127.0.0.1]:{port} {pins['rsa']}\n")
        direct = subprocess.run(
            ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
             "-o", f"UserKnownHostsFile={known}", "-o", "HostKeyAlgorithms=rsa-sha2-512,rsa-sha2-256",
             "-o", "IdentitiesOnly=yes", "-i", str(node.ssh_dir / "client_key"), "-p", str(port), "root@127.0.0.1",
             "true"], capture_output=True, text=True, timeout=30)
        assert direct.returncode == 0, direct.stderr
    assert not marker.exists()


def test_ed25519_and_ecdsa_pins_reach_the_same_sshd_and_its_rsa_key_does_not(provider, node, tmp_path):
    with sshd_with_host_keys(node, tmp_path, ("rsa", "ecdsa", "ed25519")) as (port, pins):
        for kind in ("ed25519", "ecdsa"):
            _, made = create(provider, COMMAND, kind, {"connection": conn(node, port, hostKey=pins[kind]),
                                                       "create": f"echo {kind}"})
            assert made.properties.fields["stdout"].string_value == kind
        with pytest.raises(grpc.RpcError) as refused:
            create(provider, COMMAND, "rsa", {"connection": conn(node, port, hostKey=pins["rsa"], dialErrorLimit=0),
                                              "create": "true"})
        assert NO_SHA1 in refused.value.details()
        for kind, works in (("rsa", False), ("ecdsa", True), ("ed25519", True)):
            raw = stack_config(node.packages, f"127.0.0.1 {pins[kind]}")
            if works:
                assert parse_stack(raw).nodes[0].host_key == pins[kind]
                continue
            with pytest.raises(SpecError) as said:
                parse_stack(raw)
            assert [p.field for p in said.value.problems] == ["nodes[0].hostKey"]
            assert "`ssh-keyscan -t ed25519 -p 22 127.0.0.1`" in said.value.problems[0].message
