"""A rollout behind a bastion with reboots allowed, and the 910B nodes' NPU networks, through the real CLI.

Simulated: the servers' power (testkit/fakenode/power.py: sshd stops, every process dies, the server stays down two
seconds, comes back on a new boot, its driver answers three seconds later), the NPUs and their network ports
(testkit/fakenode/hccn_tool.py) and the kubelets. Real: the
bastion (Debian's sshd, forwarding only, the one place the nodes' names resolve), the nodes' sshd, OpenSSH.
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from components.cluster.common.node_labels import READY
from components.host.rollout import STEPS_AT_ONCE_PER_NODE
from tests.e2e import milestones
from tests.e2e.milestones import CANARY, RENAMED_SECOND, RENAMED_THIRD, SECOND, THIRD
from tests.e2e.sockets import Peak
from tests.e2e.world import BEHIND, STACK, World


def boot_id(world: World, server: str) -> str:
    return (world.nodes[server].root / "proc/sys/kernel/random/boot_id").read_text().strip()


@pytest.mark.milestone("destroyed", leaves="behind-bastion")
def test_behind_a_bastion_each_node_reboots_after_its_install_and_is_verified_on_the_new_boot(world: World,
                                                                                             pack: Path):
    servers = {CANARY: CANARY, RENAMED_SECOND: SECOND, RENAMED_THIRD: THIRD}
    boots = {name: boot_id(world, server) for name, server in servers.items()}
    milestones.write_config(world, "behind-bastion")
    # The pull-request check of a stack that reboots: the pack judges every value, no advisory (policies/README.md,
    # "At preview and at up").
    preview = world.preview("--policy-pack", str(pack), extra_env={"PULUMI_SKIP_CHECKPOINTS": "true"})
    said = [line.strip() for line in preview.out.splitlines() if "advisory" in line or "can't run policy" in line]
    print(f"e2e: a rebooting stack's preview: {len(said)} advisories; " +
          next(line.strip() for line in preview.out.splitlines() if "ascend-npu@v" in line))
    assert said == [] and "reboot-wait" in preview.out, preview.out[-3000:]
    for name in servers:  # from this machine the nodes are reachable through the bastion or not at all
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo(f"{name}.{BEHIND}", world.port)
    with Peak({"bastion": world.bastion.port, "nodes": world.port}) as connections:
        run = world.up()
    # Each step's ssh (and its hop) ends with the step: at most two at once for a wave of one node, where v1.2.1's
    # remote steps would have kept about five per node open until `up` ended.
    print(f"e2e: behind the bastion, at once: at most {connections.most['bastion']} connections to the bastion, "
          f"{connections.most['nodes']} from it to the nodes ({connections.samples} samples)")
    assert 1 <= connections.most["bastion"] <= STEPS_AT_ONCE_PER_NODE, connections.most
    assert connections.most["nodes"] <= STEPS_AT_ONCE_PER_NODE, connections.most
    assert connections.now("bastion") == connections.now("nodes") == 0
    outputs = json.loads(world.pulumi("stack", "output", "nodes", "--json", "--stack", STACK, program=False).out)
    for name, server in servers.items():
        power = world.nodes[server].power
        assert power is not None and power.events[-3:] == ["reboot", "down", "up"], (name, power.events)
        assert boot_id(world, server) != boots[name]
        assert f"rebooting in 1 s from boot {boots[name]}" in run.out  # the boot the install step left
        assert f"reboot-wait {name}: back after" in run.out, run.out[-4000:]
        # Verify ran on the new boot: no reboot pending, every chip healthy.
        assert outputs[name]["healthy"] is True and outputs[name]["rebootRequired"] is False, outputs[name]
        assert world.node_labels(name).get(READY) == "true" and not world.cordoned(name)
    # The 910B nodes' NPU networks, written after the reboot, before verify (simulated ports, hccn_tool forms).
    for name in (CANARY, RENAMED_THIRD):
        network = outputs[name]["npuNetwork"]
        assert network["ready"] is True and len(network["npus"]) == 8, network
        assert all(port["link"] == "UP" and port["netHealth"] == "Success" for port in network["npus"])
    assert "npuNetwork" not in outputs[RENAMED_SECOND]  # a 310P inference server has no NPU network
    forwarded = {target for target, _ in world.bastion.forwards()}
    assert forwarded == {f"{name}.{BEHIND}" for name in servers}, forwarded
    # Nothing to do: no step runs, so nothing dials a node and nothing reboots.
    dials, events = len(world.bastion.forwards()), {s: list(world.nodes[s].power.events) for s in servers.values()}
    again = world.up()
    assert "reboot-wait" not in again.out and len(world.bastion.forwards()) == dials
    assert {s: world.nodes[s].power.events for s in servers.values()} == events
