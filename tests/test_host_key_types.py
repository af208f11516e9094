"""RSA host key pins are refused wherever a pin is accepted, naming the field and the ssh-keyscan line that works."""
from __future__ import annotations

import pytest

from components.config.host_key_types import check_host_key_types
from components.config.stack import parse_sections

ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"
ECDSA = ("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPCqI4VINT8Llw61G1zM0bNzySnUy5KmD1lo0"
         "zq17GnPsrErf5ECYatUCj7rPOevoNxATpcRcSIGGjptEJElLUU=")
RSA_BLOB = ("AAAAB3NzaC1yc2EAAAADAQABAAABAQDtEXVDfo/jzMq6kFQeWePHhGk4OvUwNJ2cjxV/4F6EDpE5LeBL7ztEHJHNsoqWkCfy/521"
            "LR+xKBu4hnCAvujZnsuuRULBHaJ9FVArDCJwzqQWHo1+/Fx6D1BNVAWZuntxnniMuGzIZuSqTqGzqeC/dCPXBKXsJYXE9gqf891y"
            "DzGN1eSmbLYkpan8GKbbfUXi+WhkkChIgBYpGmAw5QY4uQ9AqUWMTBp5UtyuBhENdpTQoTEtOWX0s/ZkDhkxkYLAGLR4kHxhw4KZ"
            "Wi0NexuUgV3P1b4q62AgnLIcobmAMlI9tWqKB1AHozyh51nKx4Ch5rP1igsOYyt9EmMp1SP1")


def problems(node_key: str, bastion_key: str = ED25519) -> dict[str, str]:
    raw = {"ssh": {"port": 2200, "useAgent": True,
                   "bastion": {"host": "jump.example", "port": 2222, "hostKey": bastion_key}},
           "nodes": [{"name": "npu-01", "address": "10.0.0.11", "hostKey": node_key}]}
    parsed, _ = parse_sections(raw)
    return {p.field: p.message for p in check_host_key_types(parsed)}


@pytest.mark.parametrize("pin", [f"ssh-rsa {RSA_BLOB}", f"rsa-sha2-256 {RSA_BLOB}", f"rsa-sha2-512 {RSA_BLOB}",
                                 f"10.0.0.11 ssh-rsa {RSA_BLOB}", f"[10.0.0.11]:2200 ssh-rsa {RSA_BLOB}"])
def test_a_node_pinned_by_its_rsa_key_is_refused_with_the_line_to_run(pin):
    said = problems(pin)
    assert list(said) == ["nodes[0].hostKey"]
    assert "OpenSSH 8.8 and later refuse" in said["nodes[0].hostKey"]
    assert "`ssh-keyscan -t ed25519 -p 2200 10.0.0.11`" in said["nodes[0].hostKey"]


def test_the_bastion_pinned_by_its_rsa_key_is_refused_with_its_own_port():
    said = problems(ED25519, f"jump.example ssh-rsa {RSA_BLOB}")
    assert list(said) == ["ssh.bastion.hostKey"]
    assert "`ssh-keyscan -t ed25519 -p 2222 jump.example`" in said["ssh.bastion.hostKey"]


@pytest.mark.parametrize("pin", [ED25519, ECDSA, f"10.0.0.11 {ECDSA}"])
def test_ed25519_and_ecdsa_pins_are_accepted(pin):
    assert problems(pin, pin.removeprefix("10.0.0.11 ")) == {}
