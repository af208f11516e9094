"""The node agents that may hold node-level privilege: ascend-npu's own (npu-agents.yaml) and a site's."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

from model.kube_objects import mapping, sequence
from model.npu_daemonsets import DEVICE_PLUGIN, EXPORTER, image_patterns

AGENTS_FILE = Path(__file__).resolve().parents[1] / "npu-agents.yaml"
DEFAULT_NAMESPACES = ["ascend-system"]  # the stack model's default `cluster.namespace`
HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")


def _path(value: str) -> str:
    return posixpath.normpath("/" + value.strip())


def capability(name: Any) -> str:
    """`cap_net_admin` and `NET_ADMIN` alike -> `NET_ADMIN`."""
    text = str(name).strip().upper()
    return text[4:] if text.startswith("CAP_") else text


@dataclass(frozen=True)
class Agent:
    """Who an agent is (namespace, pod labels, images) and the node-level privilege it may hold."""

    name: str
    namespaces: frozenset[str]
    labels: tuple[tuple[str, str], ...]
    images: tuple[str, ...]  # substrings of the images its privileged containers run; empty: any image
    privileged: bool = False
    host_namespaces: frozenset[str] = frozenset()
    capabilities: frozenset[str] = frozenset()
    host_ports: frozenset[int] = frozenset()
    host_paths: tuple[str, ...] = ()

    def recognises(self, namespace: Any, pod_labels: Mapping[str, Any]) -> bool:
        """Whether a workload in `namespace` whose pods carry `pod_labels` is this agent."""
        return namespace in self.namespaces and all(k in pod_labels and pod_labels[k] == v for k, v in self.labels)

    def runs(self, image: Any) -> bool:
        """Whether a container of this agent runs one of its images."""
        return not self.images or (isinstance(image, str) and any(s in image for s in self.images))

    def allowances(self) -> str:
        """What the agent may hold, for messages."""
        images = f" (images containing {' or '.join(self.images)})" if self.images else ""
        held = [f"privileged{images}"] if self.privileged else []
        held += sorted(self.host_namespaces) + [f"capability {c}" for c in sorted(self.capabilities)]
        held += [f"hostPort {p}" for p in sorted(self.host_ports)]
        held.append(f"host paths {', '.join(self.host_paths)}" if self.host_paths else "no host path")
        return f"{self.name} may hold {', '.join(held)}"

    def allows_path(self, path: str) -> bool:
        """The path, or a path beneath it, is on the agent's list (`..` resolved first)."""
        wanted = _path(path)
        return any(wanted == allowed or wanted.startswith(allowed.rstrip("/") + "/")
                   for allowed in map(_path, self.host_paths))


@lru_cache(maxsize=None)
def _builtin_entries(path: Path = AGENTS_FILE) -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load(path.read_text())["agents"])


def _agent(entry: Mapping[str, Any], name: str, namespaces: list[str], images: list[str]) -> Agent:
    return Agent(name=name, namespaces=frozenset(namespaces),
                 labels=tuple((str(k), str(v)) for k, v in mapping(entry.get("labels")).items()),
                 images=tuple(str(i) for i in images),
                 privileged=entry.get("privileged") is True,
                 host_namespaces=frozenset(f for f in HOST_NAMESPACES if entry.get(f) is True),
                 capabilities=frozenset(capability(c) for c in sequence(entry.get("capabilities"))),
                 host_ports=frozenset(int(p) for p in sequence(entry.get("hostPorts")) if isinstance(p, (int, float))),
                 host_paths=tuple(str(p) for p in sequence(entry.get("hostPaths"))))


def builtin_agents(config: Mapping[str, Any]) -> list[Agent]:
    """ascend-npu's device plugin and exporter, in the configured namespaces, with the configured images."""
    namespaces = [str(n) for n in config.get("agentNamespaces", DEFAULT_NAMESPACES)]
    patterns = image_patterns(config, DEVICE_PLUGIN, EXPORTER)
    return [_agent(e, f"ascend-npu {e['role']}", namespaces, patterns[e["role"]]) for e in _builtin_entries()]


def site_agents(config: Mapping[str, Any]) -> list[Agent]:
    """The `allowedAgents` of the rule's config; an entry without labels would match any pod, so it never does."""
    agents = []
    for i, entry in enumerate(map(mapping, sequence(config.get("allowedAgents", [])))):
        if not mapping(entry.get("labels")) or not entry.get("namespace"):
            continue
        agents.append(_agent(entry, str(entry.get("name") or f"allowedAgents[{i}]"), [str(entry["namespace"])],
                             [str(image) for image in sequence(entry.get("images"))]))
    return agents

