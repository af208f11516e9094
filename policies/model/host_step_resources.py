"""What ascend-npu host steps look like to the engine: commands (remote ones, and local ones that run the command in
their environment on the node over ssh) and the per-node component."""
from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from model.kube_objects import mapping
from model.preview import environment

COMMAND_TYPES = ("command:remote:Command", "command:local:Command")
HOST_COMPONENT = "ascend-npu:index:AscendHost"
RUN_FILE = re.compile(r"Ascend-[A-Za-z0-9._-]+\.run")
EXACT_VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z]+)+$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


def command_text(props: Any) -> str:
    """Every command string a command runs (create, update, delete) and its environment's values (where ascend-npu's
    local host steps hold the command they run on the node over ssh), joined."""
    p = mapping(props)
    texts = [p.get(k) for k in ("create", "update", "delete")] + list(environment(p).values())
    return "\n".join(text for text in texts if isinstance(text, str))


def env_parameters(command: str) -> dict[str, str]:
    """`KEY=VALUE` words of an `env K=V ... bash -c RUNNER ...` command (the way ascend-npu passes parameters)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    return dict(w.split("=", 1) for w in words if re.match(r"^ASCEND_[A-Z0-9_]+=", w))


def host_versions(props: Any) -> Mapping[str, Any]:
    """`versions` of an AscendHost component: firmware, driver, cann, dockerRuntime."""
    return mapping(mapping(props).get("versions"))
