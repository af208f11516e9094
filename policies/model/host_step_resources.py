"""What ascend-npu host steps look like to the engine: commands (remote, or local ones that run a command on the node
over ssh) and the per-node component."""
from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from model.kube_objects import mapping

REMOTE_TYPES = ("command:remote:Command", "command:remote:CopyToRemote", "command:remote:CopyFile")
COMMAND_TYPES = ("command:remote:Command", "command:local:Command")
HOST_COMPONENT = "ascend-npu:index:AscendHost"
RUN_FILE = re.compile(r"Ascend-[A-Za-z0-9._-]+\.run")
EXACT_VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z]+)+$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


def command_text(props: Any) -> str:
    """Every command string a remote command runs (create, update, delete), joined."""
    p = mapping(props)
    return "\n".join(str(p.get(k)) for k in ("create", "update", "delete") if isinstance(p.get(k), str))


def env_parameters(command: str, depth: int = 2) -> dict[str, str]:
    """`KEY=VALUE` words of an `env K=V ... bash -c RUNNER ...` command (the way ascend-npu passes parameters), also
    inside a word that is itself such a command (what a local command runs on the node over ssh)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    found: dict[str, str] = {}
    for word in words:
        if re.match(r"^ASCEND_[A-Z0-9_]+=", word):
            found.update([word.split("=", 1)])
        elif depth > 1 and " ASCEND_" in word:
            found.update(env_parameters(word, depth - 1))
    return found


def host_versions(props: Any) -> Mapping[str, Any]:
    """`versions` of an AscendHost component: firmware, driver, cann, dockerRuntime."""
    return mapping(mapping(props).get("versions"))
