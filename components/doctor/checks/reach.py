"""What the doctor could not check: a node it could not reach over SSH, an API server that did not answer."""
from __future__ import annotations

from components.doctor.findings import CLUSTER, UNREACHABLE, Finding, Kind

NODE_UNREACHABLE = Kind("node-unreachable", UNREACHABLE, "the node could not be checked over SSH")
API_UNREACHABLE = Kind("api-unreachable", UNREACHABLE, "the cluster could not be checked through the API")
KINDS = (NODE_UNREACHABLE, API_UNREACHABLE)


def node_unreachable(node: str, error: str) -> Finding:
    return NODE_UNREACHABLE(node, f"not checked: {error}", "check that the node is up and answers SSH as the stack "
                            "says (address, ssh.port, ssh.user, its hostKey, the bastion), then run the doctor again")


def api_unreachable(error: str) -> Finding:
    return API_UNREACHABLE(CLUSTER, f"the API was not checked: {error}", "the doctor uses the stack's kubeconfig "
                           "context (cluster.kubeContext) with the rules docs/day-2.md lists; check that it answers "
                           "(`kubectl --context ... get nodes`)")
