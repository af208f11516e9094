"""Checks across the nodes: pool and cluster defaults applied, unique names and addresses, previous names, canaries."""
from __future__ import annotations

from difflib import get_close_matches
from typing import Any

import components.config.npu_network as npu_network
from components.config.hosts import NodeSpec
from components.config.problems import Problem
from components.config.redact import preview

NODE_FIELDS = {"chip": "910, 910B, 910C, 310 or 310P", "arch": "aarch64 or x86_64", "npu_count": "the number of NPUs"}


def resolve_nodes(parsed: dict[str, Any]) -> tuple[list[NodeSpec], list[Problem]]:
    """Apply pool and cluster defaults to each node; report what is still unset."""
    pools, cluster = parsed.get("pools", {}), parsed.get("cluster")
    nodes, problems = [], []
    networks: list[tuple[int, tuple[npu_network.NpuPort, ...]]] = []
    for i, node in enumerate(parsed.get("nodes", [])):
        if node is None or node.pool and ("pools" not in parsed or pools.get(node.pool, True) is None):
            continue  # the node, its pool or the pools section is already reported: say nothing more
        pool = pools.get(node.pool) if node.pool else None
        if node.pool and pool is None:
            problems.append(Problem(f"nodes[{i}].pool", _unknown_pool(node.pool, pools)))
            continue  # what the node lacks would come from that pool: the name is the one problem
        values: dict[str, Any] = {}
        for name in ("chip", "arch", "npu_count", "container_runtime"):
            values[name] = getattr(node, name) or (getattr(pool, name) if pool else None)
        if values["container_runtime"] is None and cluster is not None:
            values["container_runtime"] = cluster.container_runtime
        missing = [n for n in NODE_FIELDS if values[n] is None]
        for name in missing:
            alias = "npuCount" if name == "npu_count" else name
            problems.append(Problem(f"nodes[{i}].{alias}", f"not set on the node nor on its pool; write "
                                                            f"{NODE_FIELDS[name]}"))
        chip = values["chip"].value if values["chip"] is not None else None
        ports, wrong = npu_network.resolve(node, pool, i, values["npu_count"], chip)
        problems += wrong
        networks.append((i, ports))
        if not missing and not wrong and values["container_runtime"] is not None:
            nodes.append(NodeSpec(name=node.name, address=node.address, host_key=node.host_key, pool=node.pool,
                                  wave=node.wave, previous_names=tuple(node.previous_names), npu_network=ports,
                                  **values))
    return nodes, problems + npu_network.check_unique(networks)


def _unknown_pool(name: str, pools: dict[str, Any]) -> str:
    """What to write for a pool name that is not in `pools`: the closest pool, or its definition."""
    if not pools:
        return (f"pool {preview(name)} is not defined (ascend-npu:pools is empty); define it under ascend-npu:pools "
                "(chip, arch, npuCount), or drop pool and set chip, arch and npuCount on the node")
    known = ", ".join(sorted(pools))
    closest = get_close_matches(name, list(pools), n=1)
    fix = f"write pool: {closest[0]}" if closest else f"write one of {known}"
    return f"pool {preview(name)} is not in ascend-npu:pools (known: {known}); {fix}, or define {preview(name)} there"


def check_identity(parsed: dict[str, Any]) -> list[Problem]:
    """Node names and addresses are unique; canaries are nodes."""
    problems: list[Problem] = []
    names: dict[str, int] = {}
    addresses: dict[str, int] = {}
    nodes = parsed.get("nodes", [])
    for i, node in enumerate(nodes):
        if node is None:
            continue
        for seen, value, key in ((names, node.name, "name"), (addresses, node.address, "address")):
            if value in seen:
                problems.append(Problem(f"nodes[{i}].{key}", f"{preview(value)} is also nodes[{seen[value]}].{key}; "
                                                               f"each node needs its own {key}"))
            seen.setdefault(value, i)
    problems += _previous_names(nodes, names)
    if "rollout" in parsed:
        problems += _canaries(parsed["rollout"].canaries, names, complete="nodes" in parsed and None not in nodes)
    return problems


def _previous_names(nodes: list, names: dict[str, int]) -> list[Problem]:
    """A previous name is no node's name now, and belonged to one node only."""
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for i, node in enumerate(nodes):
        for j, old in enumerate(node.previous_names if node is not None else ()):
            field = f"nodes[{i}].previousNames[{j}]"
            if old in names:
                problems.append(Problem(field, f"{preview(old)} is nodes[{names[old]}].name now; list only names "
                                               "no node has any more"))
            elif old in seen:
                problems.append(Problem(field, f"{preview(old)} is also {seen[old]}; a previous name belongs to "
                                               "one server"))
            seen.setdefault(old, field)
    return problems


def _canaries(canaries: list[str], names: dict[str, int], complete: bool) -> list[Problem]:
    """Each canary once, and a node (checked only when every node parsed)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for i, canary in enumerate(canaries):
        if canary in seen:
            problems.append(Problem(f"rollout.canaries[{i}]", f"'{canary}' is also rollout.canaries[{seen[canary]}]; "
                                                               "list each canary once (one per pool you want "
                                                               "tested first)"))
            continue
        seen[canary] = i
        if complete and canary not in names:
            problems.append(Problem(f"rollout.canaries[{i}]", f"{preview(canary)} is not a node name; use one of "
                                                               f"{', '.join(list(names)[:5]) or 'the nodes'}"))
    return problems
