"""The states a stack passes through in the end-to-end run, in order, and how a world gets from one to the next.

A scenario starts at one milestone and may leave the world at a later one (its `milestone` mark). Run in full, each
scenario starts where the one before it left off; run alone (`make e2e K=drain`), the world is brought to the
scenario's start by the same changes and `pulumi up`s, without the checks of the scenarios it skips.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.cluster import register_nodes
from testkit.fakenode.packages import CURRENT, NEW, in_release_set
from tests.e2e.world import BEHIND, MOVED_ADDRESS, NAMESPACE, STACK, World, base_config, node_entry

CANARY, SECOND, THIRD, FOURTH = "e2e-npu-01", "e2e-npu-02", "e2e-npu-03", "e2e-npu-04"
FIRST_THREE = (CANARY, SECOND, THIRD)
NODE_NAMES = (*FIRST_THREE, FOURTH)
RENAMED_THIRD, RENAMED_SECOND = f"{THIRD}-b", f"{SECOND}-b"
# The fourth server, back as an Atlas A3 (910C) node behind the bastion.
A3_NODE = "e2e-a3-01"


def upgraded(world: World, config: dict) -> dict:
    """Every node to the newer release set; the drain may evict the bare training Pods (rollout.drain.force)."""
    rollout = {**config["rollout"], "drain": {**config["rollout"].get("drain", {}), "force": True}}
    return {**config, "versions": in_release_set(NEW),
            "packages": {**config["packages"], "files": world.packages.files_for(NEW)}, "rollout": rollout}


def current_set(world: World, config: dict) -> dict:
    """The stack moved from MindCluster 6.0.0's set to 26.1.0's: HDK 25.5.0, CANN 9.1.0, its runtime and agents."""
    return {**config, "versions": in_release_set(CURRENT),
            "packages": {**config["packages"], "files": world.packages.files_for(CURRENT)}}


def with_a3(world: World, config: dict) -> dict:
    """An Atlas A3 node: the fourth server, reached through the bastion, 8 chips (this dump's 4 NPUs of 2 chips)."""
    entry = {"name": A3_NODE, "address": f"{A3_NODE}.{BEHIND}", "hostKey": world.nodes[FOURTH].host_key,
             "chip": "910C", "arch": "aarch64", "npuCount": 8, "containerRuntime": "containerd"}
    images = {**config["validation"]["images"], "910C": {"repository": "registry.e2e.example/ascend/cann",
                                                         "tag": f"{CURRENT['cann']}-a3-ubuntu22.04-py3.12"}}
    return {**config, "nodes": [*config["nodes"], entry], "validation": {**config["validation"], "images": images}}


def a3_server(world: World, config: dict) -> None:
    """The fourth server shows Atlas A3 NPUs (19e5:d803, npu-smi's two chips per NPU), its name resolves on the
    bastion, its power is simulated like the others', and its kubelet registers."""
    server = world.nodes[FOURTH]
    server.knob("npu-smi-fixture", "a3")
    server.knob("pci-device", "d803")
    world.bastion.route({**world.bastion.names, f"{A3_NODE}.{BEHIND}": server.address},
                        world.nodes[CANARY].ssh_dir / "authorized_keys")
    if server.power is None:
        server.power_on(down_seconds=2, driver_load_seconds=3)
    register(A3_NODE)(world, config)


def with_fourth(world: World, config: dict) -> dict:
    return {**config, "nodes": [*config["nodes"], node_entry(FOURTH, world.nodes[FOURTH])]}


def without_fourth(world: World, config: dict) -> dict:
    return {**config, "nodes": [node for node in config["nodes"] if node["name"] != FOURTH]}


def cluster_renamed(world: World, config: dict) -> dict:
    return {**config, "cluster": {**config["cluster"], "name": "e2e-renamed"}}


def second_moved(world: World, config: dict) -> dict:
    return {**config, "nodes": [{**node, "address": MOVED_ADDRESS} if node["name"] == SECOND else node
                                for node in config["nodes"]]}


def uninstall_on_destroy(world: World, config: dict) -> dict:
    return {**config, "rollout": {**config["rollout"], "uninstallOnDestroy": True}}


def third_renamed_with_previous_names(world: World, config: dict) -> dict:
    return {**config, "nodes": [{**node, "name": RENAMED_THIRD, "previousNames": [THIRD]} if node["name"] == THIRD
                                else node for node in config["nodes"]]}


def second_renamed(world: World, config: dict) -> dict:
    return {**config, "nodes": [{**node, "name": RENAMED_SECOND} if node["name"] == SECOND else node
                                for node in config["nodes"]]}


def behind_bastion(world: World, config: dict) -> dict:
    """Every node reached by a name only the bastion resolves; reboots allowed, so each fresh install reboots."""
    jump = world.bastion
    bastion = {"host": jump.address, "port": jump.port, "hostKey": jump.host_key}
    return {**config, "ssh": {**config["ssh"], "bastion": bastion},
            "nodes": [{**node, "address": f"{node['name']}.{BEHIND}", **npu_network(node, i)}
                      for i, node in enumerate(config["nodes"])],
            "rollout": {**config["rollout"], "allowReboot": True, "rebootTimeout": 120}}


def npu_network(node: dict, index: int) -> dict:
    """A 910B node's NPU network (RoCE), written once its driver is in and it is back from its reboot."""
    if node["chip"] != "910B":
        return {}
    return {"npuNetwork": {"addresses": [f"192.168.100.{10 * (index + 1) + npu}" for npu in range(node["npuCount"])],
                           "netmask": "255.255.255.0", "gateway": "192.168.100.1", "detectAddress": "192.168.100.1"}}


def route_through_bastion(world: World, config: dict) -> None:
    """The bastion resolves each node's name to its server and lets the stack's key in; the servers reboot for
    real (power.py); the namespace the destroy removed is gone, as after any destroy that had time to finish."""
    servers = {node["name"]: next(fake for fake in world.nodes.values() if fake.address == entry["address"])
               for node, entry in zip(config["nodes"], config_at(world, "destroyed")["nodes"])}
    world.bastion.route({f"{name}.{BEHIND}": server.address for name, server in servers.items()},
                        world.nodes[CANARY].ssh_dir / "authorized_keys")
    for server in servers.values():
        if server.power is None:
            server.power_on(down_seconds=2, driver_load_seconds=3)
    deadline = time.monotonic() + 120
    while world.kube.find(f"/api/v1/namespaces/{NAMESPACE}") is not None and time.monotonic() < deadline:
        time.sleep(0.5)


def register(*names: str) -> Callable[[World, dict], None]:
    """The servers' kubelets register under NAMES (before the stack names them), as a joining server's would."""
    def joined(world: World, config: dict) -> None:
        register_nodes(world.kube, [node for node in config["nodes"] if node["name"] in names
                                    and world.kube.find(f"/api/v1/nodes/{node['name']}") is None])
    return joined


def rotate_key(world: World, config: dict) -> None:
    """A new key, authorized beside the old one on every node, set as the stack's secret."""
    key = world.root / f"key-{len(list(world.root.glob('key-*.pub')))}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    for node in world.nodes.values():
        authorized = node.ssh_dir / "authorized_keys"
        authorized.write_text(authorized.read_text() + key.with_suffix(".pub").read_text())
    world.set_key(key)


def move_second(world: World, config: dict) -> None:
    """The server comes back on another address with nothing of ours in its /var/tmp (reinstalled, or moved)."""
    node = world.nodes[SECOND]
    if node.address != MOVED_ADDRESS:
        node.move(MOVED_ADDRESS)
    shutil.rmtree(node.root / "var/tmp")
    (node.root / "var/tmp").mkdir()


def up(world: World) -> None:
    world.up()


def up_with_a_failing_driver(world: World) -> None:
    """The upgrade stopped in wave 1: the second node's driver installer fails, the canary is done."""
    world.nodes[SECOND].knob("fail-driver", "1")
    try:
        run = world.up(check=False)
    finally:
        world.nodes[SECOND].knob("fail-driver", None)
    assert run.code != 0 and SECOND in run.out, run.out[-3000:]


def destroy(world: World) -> None:
    world.pulumi("destroy", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive", program=False)


def nothing(*_: object) -> None:
    pass


@dataclass(frozen=True)
class Milestone:
    """A stack state: its config (CHANGE applied to the one before), what else is true of the world (PREPARE, done
    before the config is written), and how the stack gets there (ENTER, `pulumi up` unless said otherwise)."""

    name: str
    change: Callable[[World, dict], dict] = lambda world, config: config
    prepare: Callable[[World, dict], None] = nothing
    enter: Callable[[World], None] = up
    # Passed through only as a target: a walk to a later milestone goes around it.
    detour: bool = False


CHAIN = (
    Milestone("fresh", enter=nothing),
    Milestone("installed"),
    Milestone("upgrade-stopped", change=upgraded, enter=up_with_a_failing_driver, detour=True),
    Milestone("upgraded", change=upgraded),
    Milestone("node-added", change=with_fourth, prepare=register(FOURTH)),
    Milestone("node-removed", change=without_fourth),
    Milestone("key-rotated", prepare=rotate_key),
    Milestone("cluster-renamed", change=cluster_renamed),
    Milestone("node-moved", change=second_moved, prepare=move_second),
    Milestone("uninstall-on-destroy", change=uninstall_on_destroy),
    Milestone("renamed-with-previous-names", change=third_renamed_with_previous_names, prepare=register(RENAMED_THIRD)),
    Milestone("renamed", change=second_renamed, prepare=register(RENAMED_SECOND)),
    Milestone("destroyed", enter=destroy),
    Milestone("behind-bastion", change=behind_bastion, prepare=route_through_bastion),
    Milestone("mindcluster-26", change=current_set),
    Milestone("a3-added", change=with_a3, prepare=a3_server),
)
NAMES = tuple(m.name for m in CHAIN)


def index(name: str) -> int:
    if name not in NAMES:
        raise ValueError(f"no milestone {name!r}; the milestones are {', '.join(NAMES)}")
    return NAMES.index(name)


def config_at(world: World, name: str) -> dict:
    """The stack config of milestone NAME: the first three nodes at the older release set, then every change."""
    config = base_config(world, list(FIRST_THREE))
    for milestone in CHAIN[1:index(name) + 1]:
        config = milestone.change(world, config)
    return config


def write_config(world: World, name: str) -> None:
    """Milestone NAME's config written, after what else it needs (a kubelet registered, a server moved)."""
    config = config_at(world, name)
    CHAIN[index(name)].prepare(world, config)
    world.write_config(config)


def arrive(world: World, name: str) -> None:
    """From the milestone just before NAME (or any earlier one, the detours left out): its world, config and `up`."""
    write_config(world, name)
    CHAIN[index(name)].enter(world)


def walk(start: str, target: str) -> list[str]:
    """The milestones a world at START passes on its way to TARGET."""
    return [m.name for m in CHAIN[index(start) + 1:index(target) + 1] if not m.detour or m.name == target]
