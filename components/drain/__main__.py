"""`python -m components.drain before-host|after-host|leave --node NAME`: one node's drain step, as `up` runs it.

Runs on the machine that runs `pulumi up` (a local command of the stack), against the stack's kubeconfig context:
KUBECONFIG or ~/.kube/config, `--context` as cluster.kubeContext. It needs, cluster-wide: get and patch nodes,
list pods, create pods/eviction (the rules are in the README, "Upgrades that drain").
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from datetime import datetime, timezone
from typing import Optional

from components.drain import node_state as state
from components.drain.evict import DrainFailed, evict_all
from components.drain.pods import name_of, npu_requests, to_evict
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint

# What the host step will change that kills NPU work (set by the program, shown in `pulumi preview --diff`).
REASON_ENV = "ASCEND_NPU_DRAIN_FOR"


def say(step: str, node: str, text: str) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"{stamp} {step} {node}: {text}", flush=True)


def previous_reason() -> Optional[str]:
    """The reason the last successful run of this step drained for (its JSON line in the previous stdout)."""
    lines = [line for line in os.environ.get("PULUMI_COMMAND_STDOUT", "").splitlines() if line.startswith("{")]
    try:
        return json.loads(lines[-1]).get("for") if lines else None
    except ValueError:
        return None


def before_host(api: Api, args: argparse.Namespace, reason: str) -> dict:
    """Cordon and evict when the host step will disrupt NPU work on a node of the cluster."""
    tell = functools.partial(say, "drain", args.node)
    node = state.find_node(api, args.node)
    if node is None:
        tell("not in the cluster yet: its host steps run without a drain")
        return {"drained": False}
    before = previous_reason()
    if before == reason:
        tell(f"nothing that stops NPU work changes ({reason}): not drained")
        return {"drained": False}
    pods = to_evict(api, args.node, args.selector)
    if before is None and not pods:
        tell(f"first install and no NPU Pods here: not drained ({reason})")
        return {"drained": False}
    tell(f"draining for {reason}" + (f" (was {before})" if before else ""))
    mine = state.cordon(api, node, state.DRAINING)
    tell("cordoned" if mine else "was already cordoned (left so afterwards)")
    for pod in pods:
        tell(f"to evict: {name_of(pod)} {json.dumps(npu_requests(pod))}")
    try:
        done = evict_all(api, pods, time.monotonic() + args.timeout, tell)
    except DrainFailed as err:
        state.set_state(api, args.node, state.DRAIN_FAILED)
        raise DrainFailed(f"node {args.node} was not drained within {args.timeout} s (rollout.drain.timeout): "
                          f"{err}. It stays cordoned and labelled {state.STATE}={state.DRAIN_FAILED}; its host "
                          "step did not run. Let the PodDisruptionBudget allow it, or move the Pod, then run "
                          "`pulumi up` again") from None
    state.set_state(api, args.node, state.UPGRADING)
    tell(f"drained ({len(done.evicted)} Pod(s) evicted); host step next, {state.STATE}={state.UPGRADING}")
    return {"drained": True, "evicted": done.evicted}


def after_host(api: Api, args: argparse.Namespace, reason: str) -> dict:
    """Uncordon a node the drain cordoned, once its host steps verified."""
    node = state.find_node(api, args.node)
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    if node is None or state.STATE not in labels:
        return {"uncordoned": False}
    mine = state.release(api, node, state.DONE)
    say("uncordon", args.node, ("uncordoned" if mine else "left cordoned (it was cordoned before the drain)")
        + f", {state.STATE}={state.DONE}")
    return {"uncordoned": mine}


def leave(api: Api, args: argparse.Namespace, reason: str) -> dict:
    """A node leaving the stack: its NPU Pods evicted, its drain labels gone, its cordon undone if ours."""
    tell = functools.partial(say, "leave", args.node)
    node = state.find_node(api, args.node)
    if node is None:
        tell("not in the cluster: nothing to drain")
        return {"drained": False}
    pods = to_evict(api, args.node, args.selector)
    mine = state.cordon(api, node, state.LEAVING)
    tell(f"cordoned; {len(pods)} Pod(s) to evict")
    try:
        done = evict_all(api, pods, time.monotonic() + args.timeout, tell)
    except DrainFailed as err:
        raise DrainFailed(f"node {args.node} leaves the stack but was not drained within {args.timeout} s: {err}. "
                          "It stays cordoned; nothing was uninstalled. Let the eviction through, then run the "
                          "command again") from None
    node = state.find_node(api, args.node) or node
    state.release(api, node, None)
    tell(f"drained ({len(done.evicted)} evicted), labels removed" + ("; uncordoned" if mine else ""))
    return {"drained": True, "evicted": done.evicted}


STEPS = {"before-host": before_host, "after-host": after_host, "leave": leave}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.drain")
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("--node", required=True)
    parser.add_argument("--context", default=None)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--selector", default="")
    args = parser.parse_args(argv)
    reason = os.environ.get(REASON_ENV, "")
    try:
        result = STEPS[args.step](Api(load_endpoint(args.context)), args, reason)
    except (KubeconfigError, DrainFailed) as err:
        print(f"{args.step} {args.node}: {err}", file=sys.stderr)
        return 1
    except ApiError as err:
        print(f"{args.step} {args.node}: the API refused: {err} (the drain needs get/patch nodes, list pods and "
              "create pods/eviction)", file=sys.stderr)
        return 1
    print(json.dumps({"node": args.node, "for": reason, **result}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
