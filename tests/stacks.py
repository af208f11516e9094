"""Stack files for tests: the committed stacks, and patched copies of them."""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from bench.synthetic import PASSPHRASE

ROOT = Path(__file__).resolve().parents[1]
STEP = re.compile(r"\.?([A-Za-z0-9_-]+)|\[(\d+)\]")


PROD_PASSPHRASE = PASSPHRASE  # the example passphrase Pulumi.prod.yaml's secrets were made with


def seal(text: str, salt_state: str, passphrase: str = PROD_PASSPHRASE) -> str:
    """`text` as `pulumi config set --secret` writes it for a passphrase stack of `encryptionsalt: salt_state`."""
    import base64
    import hashlib
    import os

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    salt = base64.b64decode(salt_state.split(":")[1])
    nonce = os.urandom(12)
    key = hashlib.pbkdf2_hmac("sha256", passphrase.encode(), salt, 1_000_000, 32)
    sealed = AESGCM(key).encrypt(nonce, text.encode(), None)
    return f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"


def load_stack(name: str) -> dict:
    """The parsed `Pulumi.<name>.yaml`."""
    return yaml.safe_load((ROOT / f"Pulumi.{name}.yaml").read_text())


def _steps(path: str) -> list[Any]:
    """`ascend-npu:nodes[1].name` -> ['ascend-npu:nodes', 1, 'name']."""
    key, _, rest = path.partition(":")
    head = re.match(r"[A-Za-z0-9_-]+", rest).group(0)
    steps: list[Any] = [f"{key}:{head}"]
    for name, index in STEP.findall(rest[len(head):]):
        steps.append(int(index) if index else name)
    return steps


def _parent(config: dict, steps: list[Any], create: bool) -> Any:
    node = config
    for step in steps[:-1]:
        if create and isinstance(step, str) and step not in node:
            node[step] = {}
        node = node[step]
    return node


def patched(stack: dict, patch: dict) -> dict:
    """A copy of `stack` with `set` paths written, `unset` keys removed and `delete` list items dropped."""
    out = copy.deepcopy(stack)
    config = out["config"]
    for path, value in (patch.get("set") or {}).items():
        steps = _steps(path)
        _parent(config, steps, create=True)[steps[-1]] = value
    for path in patch.get("unset") or []:
        steps = _steps(path)
        _parent(config, steps, create=False).pop(steps[-1])
    for path in patch.get("delete") or []:
        steps = _steps(path)
        del _parent(config, steps, create=False)[steps[-1]]
    return out


def write_stack(stack: dict, directory: Path, name: str = "case") -> Path:
    path = directory / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump(stack, sort_keys=False))
    return path
