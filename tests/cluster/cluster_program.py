"""A Pulumi program for the tests: the stack's spec, stand-in host steps per node, the cluster layer on top."""
import pulumi
import pulumi_kubernetes as k8s
from pulumi_command import local

from components.cluster.component import AscendCluster, AscendClusterArgs
from components.config.config_source import load_stack_spec

spec = load_stack_spec()
provider = k8s.Provider("k8s", context=spec.cluster.kube_context)
# Two host steps per node, as the host layer ends a node with more than one last step.
ready = {n.name: [local.Command(f"{n.name}-driver", create=f"echo driver on {n.name}"),
                  local.Command(f"{n.name}-runtime", create=f"echo runtime on {n.name}")]
         for n in spec.nodes}
test_config = pulumi.Config("cluster-test")
taint = test_config.get_bool("taintNodes") or False
# labelLater: every node labelled after construction, as the host layer does wave by wave.
later = test_config.get_bool("labelLater") or False
cluster = AscendCluster(spec.cluster.name, AscendClusterArgs(spec=spec, provider=provider,
                                                             node_ready={} if later else ready, taint_nodes=taint))
for node, steps in ready.items() if later else ():
    cluster.label_node(node, steps)
pulumi.export("namespace", cluster.namespace)
