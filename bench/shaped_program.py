"""The shaped floor: the program's components, parents, resource types and edges, wired by the same rollout
code, with trivial inputs. What the real program costs beyond this is what its own code adds."""
from types import SimpleNamespace

import pulumi
import pulumi_kubernetes as k8s
from pulumi_command import local, remote

from components.host.rollout import gate_waves, plan_waves

config = pulumi.Config("shaped")
NODES, MAX_PARALLEL, CLUSTER_OBJECTS = (config.require_int(k) for k in ("nodes", "maxParallel", "clusterObjects"))


class Component(pulumi.ComponentResource):
    """A component of the program's type token, with no behaviour of its own."""

    def __init__(self, token: str, name: str, opts: pulumi.ResourceOptions):
        super().__init__(f"ascend-npu:index:{token}", name, None, opts)
        self.register_outputs({})


nodes = [SimpleNamespace(name=f"node-{i:04d}", wave=None) for i in range(NODES)]
canaries = tuple(n.name for n in (nodes[0], nodes[3]) if NODES > 3) or (nodes[0].name,)
platform = Component("AscendNpuPlatform", "shaped", None)
provider = k8s.Provider("shaped-k8s", opts=pulumi.ResourceOptions(parent=platform))
cluster = Component("AscendCluster", "shaped-cluster", pulumi.ResourceOptions(parent=platform))
child = pulumi.ResourceOptions(parent=cluster, provider=provider)
objects = [k8s.core.v1.ConfigMap(f"shaped-cluster-object-{i}", opts=child) for i in range(CLUSTER_OBJECTS - 1)]


def build_wave(wave, after):
    gates = []
    for node in wave:
        host = Component("AscendHost", f"shaped-{node.name}", pulumi.ResourceOptions(parent=platform))
        drain = local.Command(f"shaped-{node.name}-drain", create="true", environment={"REASON": "r"},
                              opts=pulumi.ResourceOptions(parent=host, depends_on=after))
        # The host steps are local commands (the host runner); the install waits for the wave before through the drain.
        install = local.Command(f"shaped-{node.name}-install", create="true",
                                opts=pulumi.ResourceOptions(parent=host, depends_on=[drain]))
        verify = local.Command(f"shaped-{node.name}-verify", create="true",
                               opts=pulumi.ResourceOptions(parent=host, depends_on=[install]))
        destroy = local.Command(f"shaped-{node.name}-destroy", create="true", delete="true",
                                opts=pulumi.ResourceOptions(parent=host, depends_on=[install]))
        # Earlier releases' destroy, kept emptied: a remote command that never dials.
        on_destroy = remote.Command(f"shaped-{node.name}-on-destroy", connection=remote.ConnectionArgs(host=node.name),
                                    opts=pulumi.ResourceOptions(parent=host, depends_on=[destroy]))
        uncordon = local.Command(f"shaped-{node.name}-uncordon", create="true", delete="true",
                                 environment={"REASON": "r"},
                                 opts=pulumi.ResourceOptions(parent=host, depends_on=[verify, on_destroy]))
        patch = local.Command(f"shaped-cluster-node-{node.name}", create="true", delete="true",
                              environment={"LABELS": "{}"},
                              opts=pulumi.ResourceOptions(parent=cluster, depends_on=[uncordon]))
        if node.name == canaries[0]:
            k8s.batch.v1.Job("shaped-cluster-job", opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                depends_on=[*objects, patch])))
        gates.append(uncordon)
    return gates


def close_wave(index, gates):
    return pulumi.Stash(f"shaped-wave-{index}", input=[],
                        opts=pulumi.ResourceOptions(parent=platform, depends_on=gates))


gate_waves(plan_waves(nodes, canaries, MAX_PARALLEL), build_wave, close_wave)
