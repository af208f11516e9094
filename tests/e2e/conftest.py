"""One end-to-end world for the session: fake nodes on loopback addresses, the local control plane, a stack."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket

import pytest

from engine.cluster import kwok_stages_dir, prepare, register_nodes
from engine.control_plane import BIN, ControlPlane
from testkit.fakenode.node import FakeNode, missing_requirements
from testkit.fakenode.packages import build_packages
from tests.e2e.simulated_devices import DeviceAdvertiser
from tests.e2e.world import CHIPS, MOVED_ADDRESS, NAMESPACE, STACK, World, base_config, copy_project

BINARIES = ("pulumi", "pulumi-resource-kubernetes", "etcd", "kube-apiserver", "kube-controller-manager",
            "kube-scheduler", "kwok")
NODE_NAMES = ("e2e-npu-01", "e2e-npu-02", "e2e-npu-03", "e2e-npu-04")
# Each node on its own loopback address, all on one port, as a stack's nodes share `ssh.port`.
ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")


def _why_not() -> str | None:
    missing = [name for name in BINARIES if not (BIN / name).exists()]
    if missing:
        return f"run `make engine` first: {', '.join(missing)} not in {BIN}"
    return missing_requirements()


def _shared_port() -> int:
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


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    why = _why_not()
    if why:
        if os.environ.get("ASCEND_E2E_REQUIRED") == "1":
            pytest.fail(why)
        pytest.skip(why)
    root = tmp_path_factory.mktemp("e2e")
    packages = build_packages(root / "ascend-packages")
    port = _shared_port()
    nodes = {name: FakeNode(root / name, packages, address=address, port=port)
             for name, address in zip(NODE_NAMES, ADDRESSES)}
    plane = ControlPlane(root / "cluster")
    # Each part is stopped even when stopping another one fails: a leaked control plane outlives the run.
    with contextlib.ExitStack() as stack:
        for name, node in nodes.items():
            stack.callback(node.stop)
            node.start()
            if CHIPS.get(name) == "310P":
                node.board("310P", cards=4)
        # One client key for the stack, authorized on every node.
        key = nodes[NODE_NAMES[0]].ssh_dir / "client_key"
        for node in nodes.values():
            shutil.copy(key.with_suffix(".pub"), node.ssh_dir / "authorized_keys")
        stack.callback(plane.stop)
        plane.start(kwok_stages_dir())
        prepare(plane.kube())
        world = World(root, packages, plane, nodes, port)
        copy_project(world.project)
        world.write_config(base_config(world, list(NODE_NAMES[:3])))
        register_nodes(plane.kube(), world.config()["nodes"])
        advertiser = DeviceAdvertiser(plane.kube(), lambda: world.config()["nodes"], NAMESPACE,
                                      roots={name: node.root for name, node in nodes.items()})
        world.advertiser = advertiser
        stack.callback(advertiser.stop)
        advertiser.start()
        world.pulumi("stack", "init", STACK, "--secrets-provider", "passphrase", program=False)
        world.pulumi("config", "set", "--secret", "sshPrivateKey", "--stack", STACK, program=False,
                     stdin=key.read_text())
        yield world
