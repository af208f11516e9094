"""Builds end-to-end worlds and brings them to the milestone each scenario starts from.

A world is fake nodes on loopback addresses, the local control plane and a stack; world.py says what is simulated.
A world that a failed scenario may have left anywhere, or that is past the milestone asked for, is stopped and a
new one built: a failure never decides where the next scenario starts.
"""
from __future__ import annotations

import contextlib
import shutil
import socket
from pathlib import Path
from typing import Optional

from engine.cluster import kwok_stages_dir, prepare, register_nodes
from engine.control_plane import ControlPlane
from testkit.fakenode.bastion import Bastion
from testkit.fakenode.node import FakeNode
from testkit.fakenode.packages import PackageSet
from testkit.simulated_devices import DeviceAdvertiser, DeviceHolders
from tests.e2e import milestones
from tests.e2e.world import BASTION_ADDRESS, CHIPS, MOVED_ADDRESS, NAMESPACE, STACK, World, copy_project

# Each node on its own loopback address, all on one port, as a stack's nodes share `ssh.port`.
ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")


def shared_port() -> int:
    """A port free on every node address, and on the one a node moves to."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((ADDRESSES[0], 0))
            port = probe.getsockname()[1]
        try:
            for address in (*ADDRESSES[1:], MOVED_ADDRESS):
                with socket.socket() as other:
                    other.bind((address, port))
            return port
        except OSError:
            continue
    raise RuntimeError("no port free on every node address")


def servers_of(world: World) -> dict[str, Path]:
    """Each stack node's fake server root, by its host key (names and addresses change across the milestones)."""
    by_key = {fake.host_key: fake.root for fake in world.nodes.values()}
    return {node["name"]: by_key[node["hostKey"]] for node in world.config()["nodes"] if node["hostKey"] in by_key}


class Lab:
    """The one world of the run at a time, and the milestone it is at."""

    def __init__(self, root: Path, packages: PackageSet):
        self.root, self.packages = root, packages
        self.world: Optional[World] = None
        self.at = ""
        self.builds = 0
        self._parts = contextlib.ExitStack()

    def reach(self, name: str) -> World:
        """A world at milestone NAME: this one moved forward, or a new one when this one is past it or spoiled."""
        if self.world is None or not self.at or milestones.index(self.at) > milestones.index(name):
            self.close()
            self.world, self.at = self._build(), "fresh"
        for step in milestones.walk(self.at, name):
            print(f"e2e: world {self.builds} to milestone {step}", flush=True)
            self.at = ""  # until it gets there
            milestones.arrive(self.world, step)
            self.at = step
        return self.world

    def left_at(self, name: str) -> None:
        self.at = name

    def spoil(self) -> None:
        """The scenario failed: nobody knows where it left the world."""
        self.at = ""

    def close(self) -> None:
        self._parts.close()
        self._parts = contextlib.ExitStack()
        self.world = None

    def _build(self) -> World:
        self.builds += 1
        root = self.root / f"world-{self.builds}"
        port = shared_port()
        nodes = {name: FakeNode(root / name, self.packages, address=address, port=port)
                 for name, address in zip(milestones.NODE_NAMES, ADDRESSES)}
        plane = ControlPlane(root / "cluster", tied=True)
        # Each part is stopped even when stopping another one fails: a leaked control plane outlives the run.
        parts = self._parts
        for name, node in nodes.items():
            parts.callback(node.stop)
            node.start()
            if CHIPS.get(name) == "310P":
                node.board("310P", cards=4)
        # One client key for the stack, authorized on every node.
        key = nodes[milestones.CANARY].ssh_dir / "client_key"
        for node in nodes.values():
            shutil.copy(key.with_suffix(".pub"), node.ssh_dir / "authorized_keys")
        parts.callback(plane.stop)
        plane.start(kwok_stages_dir())
        prepare(plane.kube())
        world = World(root, self.packages, plane, nodes, port)
        world.bastion = Bastion(root / "bastion", BASTION_ADDRESS, shared_port(), {}, key.with_suffix(".pub"))
        parts.callback(world.bastion.stop)
        world.bastion.start()
        copy_project(world.project)
        world.write_config(milestones.config_at(world, "fresh"))
        register_nodes(plane.kube(), world.config()["nodes"])
        advertiser = DeviceAdvertiser(plane.kube(), lambda: world.config()["nodes"], NAMESPACE,
                                      roots={name: node.root for name, node in nodes.items()})
        world.advertiser = advertiser
        parts.callback(advertiser.stop)
        advertiser.start()
        holders = DeviceHolders(plane.kube(), lambda: servers_of(world), NAMESPACE)
        parts.callback(holders.stop)
        holders.start()
        world.pulumi("stack", "init", STACK, "--secrets-provider", "passphrase", program=False)
        world.set_key(key)
        return world
