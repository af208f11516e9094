"""A Pulumi program for the tests: the stack's spec, stand-in host steps per node, the cluster layer on top."""
import pulumi
import pulumi_kubernetes as k8s
from pulumi_command import local

from components.cluster.component import AscendCluster, AscendClusterArgs
from components.spec.config_source import load_stack_spec

spec = load_stack_spec()
provider = k8s.Provider("k8s", context=spec.cluster.kube_context)
# Two host steps per node, as the host layer ends a node with more than one last step.
ready = {n.name: [local.Command(f"{n.name}-driver", create=f"echo driver on {n.name}"),
                  local.Command(f"{n.name}-runtime", create=f"echo runtime on {n.name}")]
         for n in spec.nodes}
taint = pulumi.Config("cluster-test").get_bool("taintNodes") or False
cluster = AscendCluster(spec.cluster.name, AscendClusterArgs(spec=spec, provider=provider, node_ready=ready,
                                                             taint_nodes=taint))
pulumi.export("namespace", cluster.namespace)
