"""The bench's count of the SSH connections pulumi-command v1.2.1 holds open: its rules, on made-up resources and
on a small stack run through the program."""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.connections import COMMAND, COPY, count, held
from bench.synthetic import write_synthetic
from components.plan.recorder import SECRET_SIG, SIG_KEY


@dataclass
class Made:
    type: str
    properties: dict = field(default_factory=dict)


def node_steps(proxy: bool) -> list[Made]:
    connection = {SIG_KEY: SECRET_SIG,
                  "value": {"host": "n", **({"proxy": {"host": "b"}} if proxy else {})}}
    return [Made("ascend-npu:index:AscendHost"), Made(COPY, {"connection": connection}),
            *[Made(COMMAND, {"connection": connection}) for _ in range(3)], Made("command:local:Command")]


def test_commands_keep_their_connection_copies_do_not_a_bastion_keeps_every_one():
    direct = held(node_steps(False) * 10)
    assert (direct["operator_tcp"], direct["bastion_sessions"], direct["per_node_sessions"]) == (30, 0, 3)
    through = held(node_steps(True) * 10)
    assert (through["operator_tcp"], through["bastion_sessions"], through["bastion_to_nodes"]) == (40, 40, 30)


def test_the_program_itself_is_counted(tmp_path):
    rows = {bastion: count(write_synthetic(4, tmp_path), bastion) for bastion in (True, False)}
    assert rows[True]["nodes"] == rows[False]["nodes"] == 4
    assert rows[True]["bastion_sessions"] == rows[True]["remote_commands"] + rows[True]["copies"] > 0
    assert rows[False]["bastion_sessions"] == 0 and rows[False]["operator_tcp"] == rows[False]["remote_commands"]
