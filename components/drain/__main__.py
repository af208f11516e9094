"""`python -m components.drain before-host|after-host|leave --contract 2 --node NAME`: one node's drain step.

Runs on the machine that runs `pulumi up` (a local command of the stack), against the stack's kubeconfig context:
KUBECONFIG or ~/.kube/config, `--context` as cluster.kubeContext. Its arguments, environment and last output line
are the contract in components/drain/contract.py. The permissions it needs are in docs/host-layer.md.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import time
from datetime import datetime, timezone

from components.drain import agents
from components.drain import node_state as state
from components.drain.contract import ContractError, DrainCall, parse, previous_reason
from components.drain.evict import DrainFailed, evict_all
from components.drain.node_events import record
from components.drain.pods import chosen, name_of, npu_requests, select
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint


def say(step: str, node: str, text: str) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"{stamp} {step} {node}: {text}", flush=True)


def empty(api: Api, call: DrainCall, tell, clock=time.monotonic, sleep=time.sleep) -> list[str]:
    """Cordoned already: list the node's Pods, refuse those needing an opt-in, evict the rest and await all."""
    selection = select(chosen(api, call.node, call.selector), call.force, call.delete_empty_dir_data)
    if selection.refused:
        raise DrainFailed("cannot evict " + "; ".join(f"{why}: {', '.join(names)}"
                                                       for why, names in selection.refused.items()))
    for pod in selection.evict:
        tell(f"to evict: {name_of(pod)} {json.dumps(npu_requests(pod))}")
    try:
        done = evict_all(api, selection.evict, clock() + call.timeout, tell, clock, sleep, call.grace_period,
                         tuple(selection.awaited))
    except DrainFailed as err:
        raise DrainFailed(f"not empty within {call.timeout} s (rollout.drain.timeout): {err}") from None
    return done.evicted


def fail(api: Api, node: dict, call: DrainCall, tell, err: DrainFailed, after: str) -> DrainFailed:
    """Mark the node drain-failed, say so on the Node, and the error `up` shows."""
    state.set_state(api, call.node, state.DRAIN_FAILED)
    record(api, node, state.DRAIN_FAILED, f"not drained: {err}", tell)
    return DrainFailed(f"node {call.node} was not drained: {err}. "
                       f"It stays cordoned and labelled {state.STATE}={state.DRAIN_FAILED}; {after}")


def agents_off(api: Api, call: DrainCall, before: str | None, tell, clock=time.monotonic,
               sleep=time.sleep) -> list[str]:
    """The node's NPU agents off it, within the drain's timeout, when its driver or firmware is replaced."""
    node = state.find_node(api, call.node)
    if node is None or not agents.hdk_moves(before, call.reason):
        return []
    try:
        return agents.take_off(api, node, call.reason, clock() + call.timeout, tell, clock, sleep)
    except DrainFailed as err:
        raise DrainFailed(f"node {call.node}: {err}. Not within {call.timeout} s (rollout.drain.timeout); its host "
                          "step did not run, and the next `pulumi up` waits for them again") from None


def before_host(api: Api, call: DrainCall, **timer) -> dict:
    """Cordon and evict when the host step will disrupt NPU work on a node of the cluster; then, when it replaces
    the driver or firmware, the node's own NPU agents leave it too."""
    tell = functools.partial(say, "drain", call.node)
    node = state.find_node(api, call.node)
    if node is None:
        tell("not in the cluster yet: its host steps run without a drain")
        return {"drained": False}
    before, reason = previous_reason(os.environ.get("PULUMI_COMMAND_STDOUT", "")), call.reason
    if before == reason:
        tell(f"nothing that stops NPU work changes ({reason}): not drained")
        return {"drained": False}
    result: dict = {"drained": False}
    if before is None and not chosen(api, call.node, call.selector):
        tell(f"first install and no NPU Pods here: not drained ({reason})")
    else:
        result = drain(api, node, call, before, tell, **timer)
    gone = agents_off(api, call, before, tell, **timer)
    return {**result, **({"agents_off": gone} if gone else {})}


def drain(api: Api, node: dict, call: DrainCall, before: str | None, tell, **timer) -> dict:
    """Cordon, evict the NPU Pods, and mark the node upgrading."""
    reason = call.reason
    tell(f"draining for {reason}" + (f" (was {before})" if before else ""))
    mine = state.cordon(api, node, state.DRAINING)
    record(api, node, state.DRAINING, f"cordoned to drain NPU Pods before installing {reason}", tell)
    tell("cordoned" if mine else "was already cordoned (left so afterwards)")
    try:
        evicted = empty(api, call, tell, **timer)
    except DrainFailed as err:
        raise fail(api, node, call, tell, err, "its host step did not run. The next `pulumi up` resumes the drain "
                   "(it waits for Pods still terminating); before it, let the budget allow the eviction, move the "
                   "Pod, or opt in as named") from None
    state.set_state(api, call.node, state.UPGRADING)
    record(api, node, state.UPGRADING, f"drained ({len(evicted)} Pod(s) evicted); installing {reason}", tell)
    tell(f"drained ({len(evicted)} Pod(s) evicted); host step next, {state.STATE}={state.UPGRADING}")
    return {"drained": True, "evicted": evicted}


def after_host(api: Api, call: DrainCall, **timer) -> dict:
    """Bring the node's NPU agents back and uncordon a node the drain cordoned, once its host steps verified."""
    node = state.find_node(api, call.node)
    back = node is not None and agents.bring_back(api, node, functools.partial(say, "uncordon", call.node))
    if back:
        node = state.find_node(api, call.node)
    current = state.state_of(node)
    if node is None or current is None or (current == state.DONE and not state.ours(node)):
        return {"uncordoned": False, **({"agents_back": True} if back else {})}
    mine = state.release(api, node, state.DONE)
    text = ("uncordoned" if mine else "left cordoned (it was cordoned before the drain)") + \
        f", {state.STATE}={state.DONE}"
    record(api, node, state.DONE, f"host steps verified; {text}", functools.partial(say, "uncordon", call.node))
    say("uncordon", call.node, text)
    return {"uncordoned": mine, **({"agents_back": True} if back else {})}


def leave(api: Api, call: DrainCall, **timer) -> dict:
    """A node leaving the stack: its NPU Pods evicted if its software goes too, its drain marks removed."""
    tell = functools.partial(say, "leave", call.node)
    node = state.find_node(api, call.node)
    if node is None:
        tell("not in the cluster: nothing to do")
        return {"drained": False}
    evicted: list[str] = []
    gone: list[str] = []
    if call.evict:
        state.cordon(api, node, state.LEAVING)
        record(api, node, state.LEAVING, "cordoned: the node leaves the stack and its NPU software is removed", tell)
        tell("cordoned: its NPU software is removed after this")
        try:
            evicted = empty(api, call, tell, **timer)
        except DrainFailed as err:
            raise fail(api, node, call, tell, err, "nothing was uninstalled. Let the eviction through or opt in as "
                       "named, then run the command again") from None
        gone = agents_off(api, call, None, tell, **timer)
        node = state.find_node(api, call.node) or node
    mine = state.release(api, node, None)
    agents.forget(api, node)
    text = "labels removed" + ("; uncordoned" if mine else "")
    if not call.evict:
        text = f"its NPU software stays, so its NPU Pods keep running: {text}"
    record(api, node, None, f"left the stack: {text}", tell)
    tell((f"drained ({len(evicted)} evicted), " if call.evict else "") + text)
    return {"drained": call.evict, "evicted": evicted, **({"agents_off": gone} if gone else {})}


STEPS = {"before-host": before_host, "after-host": after_host, "leave": leave}


def main(argv: list[str]) -> int:
    try:
        call = parse(argv, dict(os.environ))
    except ContractError as err:
        print(f"drain: {err}", file=sys.stderr)
        return 2
    try:
        result = STEPS[call.step](Api(load_endpoint(call.context)), call)
    except (KubeconfigError, DrainFailed) as err:
        print(f"{call.step} {call.node}: {err}", file=sys.stderr)
        return 1
    except ApiError as err:
        print(f"{call.step} {call.node}: the API refused: {err} (the drain's permissions are in docs/host-layer.md, "
              "\"Upgrades that drain\")", file=sys.stderr)
        return 1
    print(call.result_line(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
