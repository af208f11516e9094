"""Stand-in for pulumi-command: property values as the engine sends them, and their diff as v1.2.1 computes it."""
# The diff reproduces pulumi/pulumi sdk go/common/resource/properties_diff.go (PropertyMap.Diff, DeepEquals),
# properties_path.go (PropertyPath.String) and resource/plugin/provider.go (NewDetailedDiffFromObjectDiff), which
# pulumi/pulumi-go-provider v1.3.0 infer/resource.go diff() calls for pulumi-command v1.2.1.
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format, struct_pb2

SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass(frozen=True)
class Secret:
    """A value the engine marked secret: it stays wrapped, so outputs keep it secret."""

    value: Any


def decode(struct: struct_pb2.Struct | None) -> dict:
    """The properties of a Struct, secrets wrapped in Secret, unknowns left as the UNKNOWN string."""
    return _decode(json_format.MessageToDict(struct)) if struct is not None else {}


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SIG) == SECRET_SIG:
            return Secret(_decode(value.get("value")))
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def encode(props: dict) -> struct_pb2.Struct:
    """The Struct the engine reads back, with the secret signature around every Secret."""
    struct = struct_pb2.Struct()
    struct.update(_encode(props))
    return struct


def _encode(value: Any) -> Any:
    if isinstance(value, Secret):
        return {SIG: SECRET_SIG, "value": _encode(value.value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """The value with every secret unwrapped, for using it (never for returning it)."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def equal(a: Any, b: Any) -> bool:
    """DeepEquals: secrets by what they wrap, a bool never equal to a number (no input of a served type is an asset)."""
    if isinstance(a, Secret) or isinstance(b, Secret):
        return isinstance(a, Secret) and isinstance(b, Secret) and equal(a.value, b.value)
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {k for k in a if a[k] is not None} | {k for k in b if b[k] is not None}
        return all(equal(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def path_string(path: tuple) -> str:
    """PropertyPath.String: `a.b[0]`, and `["a-b"]` for a key that is not a plain name."""
    out = ""
    for i, key in enumerate(path):
        if isinstance(key, int):
            out += f"[{key}]"
        elif all(c.isascii() and (c.isalnum() or c == "_") for c in key):
            out += key if i == 0 else f".{key}"
        else:
            out += '["' + key.replace('"', '\\"') + '"]'
    return out


def detailed_diff(old: dict, new: dict) -> dict[str, str]:
    """Old inputs against new as {nested path: ADD, DELETE or UPDATE}."""
    out: dict[str, str] = {}
    _object_diff((), old, new, out)
    return out


def _object_diff(path: tuple, old: dict, new: dict, out: dict) -> None:
    for key, before in old.items():
        where = path + (key,)
        if key not in new:
            if before is not None:
                out[path_string(where)] = "DELETE"
        elif not equal(before, new[key]):
            if before is None:
                out[path_string(where)] = "ADD"
            elif new[key] is None:
                out[path_string(where)] = "DELETE"
            else:
                _value_diff(where, before, new[key], out)
    for key, after in new.items():
        if key not in old and after is not None:
            out[path_string(path + (key,))] = "ADD"


def _value_diff(path: tuple, old: Any, new: Any, out: dict) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _object_diff(path, old, new, out)
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(min(len(old), len(new))):
            if not equal(old[i], new[i]):
                _value_diff(path + (i,), old[i], new[i], out)
        for i in range(len(old), len(new)):
            out[path_string(path + (i,))] = "ADD"
        for i in range(len(new), len(old)):
            out[path_string(path + (i,))] = "DELETE"
    else:
        out[path_string(path)] = "ADD" if old is None else "DELETE" if new is None else "UPDATE"


def run_env(p: dict, previous: dict) -> dict[str, str]:
    """`environment`, plus the previous stdout/stderr unless addPreviousOutputInEnv is false (remote and local
    commandOutputs.go alike)."""
    env = {k: str(v) for k, v in (p.get("environment") or {}).items()}
    if p.get("addPreviousOutputInEnv") in (None, True):
        for key, name in (("stdout", "PULUMI_COMMAND_STDOUT"), ("stderr", "PULUMI_COMMAND_STDERR")):
            if previous.get(key):
                env[name] = previous[key]
    return env


def logged_streams(p: dict) -> tuple[str, ...]:
    """The streams `logging` sends to the engine (remote/logging.go ShouldLogStdout/Stderr; unset: both)."""
    logging = p.get("logging")
    return tuple(name for name, wanted in (("stdout", ("stdout", "stdoutAndStderr")),
                                           ("stderr", ("stderr", "stdoutAndStderr")))
                 if logging is None or logging in wanted)
