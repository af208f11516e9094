"""`python -m components.labels apply|release --contract 1 --node NAME [--context CONTEXT]`: one node's labels.

Runs on the machine that runs `pulumi up` (a local command of the stack), against the stack's kubeconfig context
as the drain does (KUBECONFIG or ~/.kube/config, `--context` as cluster.kubeContext). `apply` server-side applies
the labels and taints WANTED_ENV holds, forcing (the project owns them, over an earlier `kubectl label`), under
the field manager its last run used, or a new one; `release` applies the bare Node under that manager, which
takes off what only it set, as the kubernetes provider deletes a Patch resource (provider v4.25.0
pkg/ssa/actions.go Relinquish). Its interface is the contract in components/labels/contract.py.
"""
from __future__ import annotations

import os
import sys
import urllib.parse

from components.drain.agents import MANAGER as DRAIN_MANAGER
from components.drain.agents import READY
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint
from components.labels.contract import (
    ContractError,
    LabelCall,
    new_manager,
    parse,
    recorded_manager,
    result_line,
)

APPLY_PATCH = "application/apply-patch+yaml"


def node_path(name: str, manager: str, force: bool) -> str:
    query = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return f"/api/v1/nodes/{urllib.parse.quote(name)}?" + urllib.parse.urlencode(query)


def apply(api: Api, call: LabelCall, previous: str) -> tuple[str, dict]:
    """The node's labels (and taints) as the stack wants them; a node the cluster lacks fails the step."""
    if api.find(f"/api/v1/nodes/{urllib.parse.quote(call.node)}") is None:
        raise LookupError(f"node {call.node} is not in the cluster: its kubelet registers it (`kubectl get node "
                          f"{call.node}`); run `pulumi up` again once it has")
    manager = recorded_manager(previous) or new_manager()
    api.request("PATCH", node_path(call.node, manager, force=True), call.body(), content_type=APPLY_PATCH)
    taints = "" if call.taints is None else f"; taints {', '.join(t['key'] for t in call.taints) or 'none'}"
    print(f"labels {call.node}: {', '.join(f'{k}={v}' for k, v in sorted(call.labels.items()))}{taints}")
    return manager, {}  # the labels are in the line above and in the step's environment: not kept a third time


def release(api: Api, call: LabelCall, previous: str) -> tuple[str | None, dict]:
    """What the step's applies set, taken off unless another manager set it too."""
    manager = recorded_manager(previous)
    if manager is None:
        print(f"labels {call.node}: no apply of this step is recorded: nothing to release")
        return None, {"released": False}
    if api.find(f"/api/v1/nodes/{urllib.parse.quote(call.node)}") is None:
        print(f"labels {call.node}: not in the cluster: nothing to release")
        return manager, {"released": False}
    api.request("PATCH", node_path(call.node, manager, force=False), call.body(with_wanted=False),
                content_type=APPLY_PATCH)
    if only_the_drain_keeps_ready(api.find(f"/api/v1/nodes/{urllib.parse.quote(call.node)}") or {}):
        api.merge_patch(f"/api/v1/nodes/{urllib.parse.quote(call.node)}", {"metadata": {"labels": {READY: None}}})
    print(f"labels {call.node}: released what {manager} set")
    return manager, {"released": True}


def only_the_drain_keeps_ready(node: dict) -> bool:
    """The ready label still there, owned by no one but the drain that put it back after a driver change."""
    meta = node.get("metadata") or {}
    if READY not in (meta.get("labels") or {}):
        return False
    owners = {entry.get("manager") for entry in meta.get("managedFields") or []
              if f"f:{READY}" in ((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels", {})}
    return owners == {DRAIN_MANAGER}


def main(argv: list[str]) -> int:
    try:
        call = parse(argv, dict(os.environ))
    except ContractError as err:
        print(f"labels: {err}", file=sys.stderr)
        return 2
    previous = os.environ.get("PULUMI_COMMAND_STDOUT", "")
    try:
        manager, result = (apply if call.step == "apply" else release)(Api(load_endpoint(call.context)), call,
                                                                        previous)
    except (KubeconfigError, LookupError) as err:
        print(f"labels {call.node}: {err}", file=sys.stderr)
        return 1
    except ApiError as err:
        print(f"labels {call.node}: the API refused: {err} (the step needs get and patch on nodes: "
              "docs/cluster-layer.md)", file=sys.stderr)
        return 1
    print(result_line(call, manager, result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
