"""The reboot wait's decisions on each answer a dial can get, with a clock that moves only when the wait sleeps."""
from __future__ import annotations

import pytest

from components.runner.openssh import Answer
from components.runner.reboot_wait import NO_REBOOT_AFTER, POLL, probe_command, read, rebooted_from, wait

OLD, NEW = "1111-old", "2222-new"
REFUSED = Answer(255, "", "channel 0: open failed: connect failed: Connection refused")
OLD_BOOT = Answer(0, f"boot {OLD}\nnpu-smi ok\n", "")
LOADING = Answer(0, f"boot {NEW}\nnpu-smi dcmi module initialize failed. ret is -8005\n", "")
BACK = Answer(0, f"boot {NEW}\nnpu-smi ok\n", "")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def run(answers, timeout=1200.0):
    clock, said, limits = Clock(), [], []
    script = iter(answers)

    def ssh(limit):
        limits.append(limit)
        return next(script)
    problem = wait(ssh, "npu-01", OLD, timeout, said.append, clock, clock.sleep)
    return problem, said, clock.now, limits


def test_down_then_loading_then_back_is_back_and_each_change_is_said_once():
    problem, said, spent, _ = run([REFUSED, REFUSED, LOADING, LOADING, BACK])
    assert problem is None and spent == 4 * POLL
    assert [line.split(":", 1)[0] for line in said] == ["not back yet (0 s of 1200 s)", "not back yet (10 s of 1200 s)",
                                                        "back after 20 s"]
    assert "Connection refused" in said[0] and "-8005" in said[1] and f"on boot {NEW} (was {OLD})" in said[2]


def test_a_node_that_never_answers_fails_at_the_bound_with_the_last_answer():
    problem, said, spent, limits = run([REFUSED] * 100, timeout=60)
    assert spent == 60 and problem.startswith("not back within 60 s (rollout.rebootTimeout); last answer: channel 0")
    # No dial may outlast what is left of the bound.
    assert all(1 <= limit <= 60 for limit in limits)


def test_a_node_answering_on_the_old_boot_did_not_reboot_and_fails_before_the_bound():
    problem, _, spent, _ = run([OLD_BOOT] * 100)
    assert NO_REBOOT_AFTER <= spent < 1200 and "the reboot did not start" in problem


def test_the_listener_still_open_for_a_moment_before_the_reboot_is_waited_out():
    problem, _, _, _ = run([OLD_BOOT, OLD_BOOT, REFUSED, BACK])
    assert problem is None


@pytest.mark.parametrize("said", ["Host key verification failed.", "root@npu-01: Permission denied (publickey)."])
def test_answers_waiting_cannot_change_fail_at_once(said):
    problem, _, spent, _ = run([Answer(255, "", said)])
    assert spent == 0 and said in problem and "waiting cannot change that" in problem


def test_the_boot_is_read_from_the_install_steps_reboot_line_only():
    out = ("install: driver 25.2.0 installed\n"
           "install: reboot required: the new firmware or driver takes effect after a reboot; rebooting in 1 s from "
           f"boot {OLD} (SSH closed until the node is back)\n")
    assert rebooted_from(out) == OLD
    assert rebooted_from("install: reboot required: ... (rollout.allowReboot is false; reboot the node)\n") == ""
    assert rebooted_from(None) == "" and rebooted_from("") == ""


def test_the_probe_runs_as_root_through_sudo_for_another_user():
    assert probe_command("root").startswith("bash -c ")
    assert probe_command("ops").startswith("sudo -n bash -c ")
    assert read(Answer(1, "", "sudo: a password is required"), OLD)[0] == "down"
