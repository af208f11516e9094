"""The bench's count of SSH connections: its rules on made-up resources, and on a stack run through the program."""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.connections import COMMAND, COPY, LOCAL, NODE_STEP, count, held
from bench.synthetic import write_synthetic
from components.plan.recorder import SECRET_SIG, SIG_KEY


@dataclass
class Made:
    type: str
    properties: dict = field(default_factory=dict)


def connection(proxy: bool) -> dict:
    return {SIG_KEY: SECRET_SIG, "value": {"host": "n", **({"proxy": {"host": "b"}} if proxy else {})}}


def test_remote_steps_that_dial_on_create_stay_open_ssh_steps_only_count_at_their_peak():
    old_shape = [Made("ascend-npu:index:AscendHost"), Made(COPY, {"connection": connection(True)}),
                 *[Made(COMMAND, {"connection": connection(True), "create": "x"}) for _ in range(3)]]
    old = held(old_shape * 10, peak_steps=8)
    assert (old["left_open_by_up"], old["peak_operator_tcp"], old["peak_bastion_sessions"]) == (40, 40, 40)
    new_shape = [Made("ascend-npu:index:AscendHost"), Made(LOCAL, {"create": f"exec python -m {NODE_STEP} x"}),
                 Made(LOCAL, {"create": "kubectl drain"}),
                 Made(COMMAND, {"connection": connection(False), "delete": "bash -c x"})]
    new = held(new_shape * 10, peak_steps=8)
    assert (new["ssh_steps"], new["left_open_by_up"], new["peak_operator_tcp"]) == (10, 0, 8)
    assert (new["destroy_held"], new["destroy_bastion_sessions"]) == (10, 0)


def test_the_program_itself_is_counted(tmp_path):
    rows = {bastion: count(write_synthetic(40, tmp_path), bastion, parallel=64) for bastion in (True, False)}
    for row in rows.values():
        assert row["nodes"] == 40 and row["left_open_by_up"] == 0 and row["destroy_held"] == 40
        assert row["ssh_steps"] >= 3 * 40  # install, verify, destroy record: each its own ssh, closed with it
    # The synthetic stack's widest wave is rollout.maxParallel (8) nodes, two ssh steps each at most.
    assert rows[True]["peak_operator_tcp"] == rows[True]["peak_bastion_sessions"] == 16
    assert rows[False]["peak_operator_tcp"] == 16 and rows[False]["peak_bastion_sessions"] == 0
    assert count(write_synthetic(40, tmp_path), True, parallel=4)["peak_operator_tcp"] == 4
