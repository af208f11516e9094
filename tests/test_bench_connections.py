"""The bench's count of SSH connections: its rules on made-up resources, and on a stack run through the program."""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.connections import COMMAND, COPY, LOCAL, NODE_STEP, count, held
from bench.synthetic import write_synthetic


@dataclass
class Made:
    type: str
    properties: dict = field(default_factory=dict)


def test_remote_steps_that_dial_stay_open_ssh_steps_only_count_at_their_peak():
    old_shape = [Made("ascend-npu:index:AscendHost"), Made(COPY),
                 *[Made(COMMAND, {"create": "x"}) for _ in range(2)], Made(COMMAND, {"create": "x", "delete": "y"})]
    old = held(old_shape * 10, peak_steps=8, parallel=8, bastion=True)
    assert (old["left_open_by_up"], old["peak_operator_tcp"], old["peak_bastion_sessions"]) == (40, 40, 40)
    assert (old["left_open_by_destroy"], old["peak_destroy"]) == (10, 10)
    step = f"exec python -m {NODE_STEP} x"
    new_shape = [Made("ascend-npu:index:AscendHost"), Made(LOCAL, {"create": step}), Made(LOCAL, {"create": step,
                                                                                                 "delete": step}),
                 Made(LOCAL, {"create": "kubectl drain"}), Made(COMMAND, {})]
    new = held(new_shape * 10, peak_steps=8, parallel=4, bastion=False)
    assert (new["ssh_steps"], new["left_open_by_up"], new["peak_operator_tcp"]) == (20, 0, 8)
    assert (new["destroy_ssh_steps"], new["left_open_by_destroy"], new["peak_destroy"]) == (10, 0, 4)
    assert new["peak_bastion_sessions"] == new["peak_destroy_bastion_sessions"] == 0


def test_the_program_itself_is_counted(tmp_path):
    rows = {bastion: count(write_synthetic(40, tmp_path), bastion, parallel=64) for bastion in (True, False)}
    for row in rows.values():
        assert row["nodes"] == 40 and row["left_open_by_up"] == row["left_open_by_destroy"] == 0
        assert row["ssh_steps"] >= 3 * 40 and row["destroy_ssh_steps"] == 40
        assert row["peak_destroy"] == 40  # one destroy step per node, --parallel 64
    # The synthetic stack's widest wave is rollout.maxParallel (8) nodes, two ssh steps each at most.
    assert rows[True]["peak_operator_tcp"] == rows[True]["peak_bastion_sessions"] == 16
    assert rows[False]["peak_operator_tcp"] == 16 and rows[False]["peak_bastion_sessions"] == 0
    small = count(write_synthetic(40, tmp_path), True, parallel=4)
    assert small["peak_operator_tcp"] == small["peak_destroy"] == 4
