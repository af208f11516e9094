"""Stand-in for pulumi-command: what local.Command does in v1.2.1 per gRPC call, and the remote types as far as the
program still meets them (none of which runs anything: the stand-in refuses to, where v1.2.1 would dial)."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/local/commandController.go,
# remote/{command.go, commandController.go, copy.go, copyController.go}, common/inputs.go, and the generic
# Check/Diff/Create/Update of pulumi/pulumi-go-provider v1.3.0 infer/resource.go and infer/apply_secrets.go.
from __future__ import annotations

import secrets
from typing import Callable

from . import local
from .props import UNKNOWN, Secret, detailed_diff, equal, plain

COMMAND, COPY, LOCAL = "command:remote:Command", "command:remote:CopyToRemote", local.LOCAL
# Input names of each type (remote/command.go CommandInputs with common/inputs.go, remote/copy.go).
INPUTS = {COMMAND: ("triggers", "create", "update", "delete", "stdin", "logging", "connection", "environment",
                    "addPreviousOutputInEnv"),
          COPY: ("connection", "triggers", "source", "remotePath"), LOCAL: local.INPUTS}
REQUIRED = {COMMAND: ("connection",), COPY: ("connection", "source", "remotePath"), LOCAL: ()}
COMMANDS = (COMMAND, LOCAL)  # the types with create/update/delete commands and stdout/stderr
# a.SetDefault in connection.go and proxyConnection.go; addPreviousOutputInEnv has none (nil reads as true).
CONNECTION_DEFAULTS = {"user": "root", "port": 22, "dialErrorLimit": 10, "perDialTimeout": 15}
SECRET_FIELDS = ("password", "privateKey", "privateKeyPassword")  # provider:"secret" in connectionBase
Status = Callable[[str], None]


class CommandError(Exception):
    """An operation that failed as v1.2.1 fails it: the engine gets the message, nothing is recorded."""


# The program's only remote resource is each node's emptied `-on-destroy` (no command: v1.2.1 runs nothing and dials
# nothing for it); stacks of releases before 43e7d7f also hold remote steps and copies, which leave the state by a
# Delete that runs nothing. A remote command that would run (a stored remote delete replayed by a `pulumi destroy`
# before any `up` of a later release) or a copy is refused: failing is never kinder than what v1.2.1 does over SSH.
NOT_SERVED = ("the command stand-in runs no remote command or copy (pulumi-command v1.2.1 would dial {host} for "
              "it); run this step against the real provider: ASCEND_NPU_COMMAND_PROVIDER=<pulumi-resource-command>")


def _refuse(props: dict) -> CommandError:
    connection = plain(props.get("connection"))
    host = connection.get("host", "?") if isinstance(connection, dict) else "?"
    return CommandError(NOT_SERVED.format(host=host))


def _connection(value):
    """The connection with its defaults, its secret fields secret, and the whole of it secret."""
    # infer DefaultCheck + applySecrets: `provider:"secret"` on connection and on password/privateKey(Password).
    inner = value.value if isinstance(value, Secret) else value
    if not isinstance(inner, dict):
        return value if value == UNKNOWN else Secret(inner)
    hop = {**inner}
    for key, default in CONNECTION_DEFAULTS.items():
        if hop.get(key) is None:
            hop[key] = default
    for key in SECRET_FIELDS:
        if hop.get(key) is not None and not isinstance(hop[key], Secret):
            hop[key] = Secret(hop[key])
    if isinstance(hop.get("proxy"), (dict, Secret)):
        proxy = _connection(hop["proxy"])
        hop["proxy"] = proxy.value if isinstance(hop["proxy"], dict) else proxy
    return Secret(hop)


def check(type_: str, news: dict) -> tuple[dict, list[tuple[str, str]]]:
    """The inputs as v1.2.1 stores them, and the failures of DefaultCheck (plus CopyToRemote.Check)."""
    inputs = {k: v for k, v in news.items() if k in INPUTS[type_]}
    failures = [(k, f"Missing required field '{k}'") for k in REQUIRED[type_] if inputs.get(k) is None]
    if inputs.get("connection") is not None:
        inputs["connection"] = _connection(inputs["connection"])
        hop = plain(inputs["connection"])
        if isinstance(hop, dict) and hop.get("host") is None:
            failures.append(("connection.host", "Missing required field 'host'"))
    return inputs, failures


def diff(type_: str, state: dict, news: dict, old_inputs: dict | None, ignore: list[str]) -> dict:
    """Old inputs against new; only a change of the whole `triggers` key is a replace (its replaceOnChanges tag)."""
    # infer diff() marks a detailed-diff key as replace only if the key itself is a replaceOnChanges input, so
    # `triggers[0]` stays an update here; the SDK's replace_on_changes=["triggers[*]"] makes the engine replace.
    news = {k: v for k, v in news.items() if k != "version" and not k.startswith("__")}
    for key in ignore:
        if key in state:
            news[key] = state[key]
    olds = old_inputs if old_inputs is not None else {k: state.get(k) for k in INPUTS[type_]}
    changes = detailed_diff(olds, news)
    kinds = {k: (v + "_REPLACE" if k == "triggers" else v) for k, v in changes.items()}
    return {"changes": bool(changes), "detailed": kinds,
            "replaces": sorted({k.split("[")[0].split(".")[0] for k, v in kinds.items() if v.endswith("REPLACE")}),
            "diffs": sorted({k.split("[")[0].split(".")[0] for k in kinds})}


def run(props: dict, command: str, previous: dict, log: Status, type_: str) -> dict:
    """CommandOutputs.run of a local command; a remote one is refused (NOT_SERVED)."""
    if type_ != LOCAL:
        raise _refuse(props)
    try:
        return local.run(props, command, previous, log)
    except local.LocalError as err:
        raise CommandError(str(err)) from None


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(4)  # resource.NewUniqueHex(prefix, 8, 0)


def create(type_: str, name: str, inputs: dict, preview: bool, log: Status) -> tuple[str, dict]:
    """Command.Create and CopyToRemote.Create: nothing runs in a preview, where stdout and stderr are unknown."""
    # copyController.go Create: a preview answers no id; a copy's id is NewUniqueHex("", 8, 0).
    if type_ == COPY:
        if preview:
            return "", dict(inputs)
        raise _refuse(inputs)
    # commandController.go Create: the id is NewUniqueHex(name, 8, 0) even in a preview; infer markComputed makes
    # the outputs that mirror no input unknown during a create's preview.
    if preview:
        return new_id(name), {**inputs, "stdout": UNKNOWN, "stderr": UNKNOWN}
    outputs = {**inputs, "stdout": "", "stderr": ""}
    if plain(inputs.get("create")) is not None:
        outputs.update(run(inputs, plain(inputs["create"]), {}, log, type_))
    return new_id(name), outputs


def update(type_: str, state: dict, news: dict, preview: bool, log: Status) -> dict:
    """Command: run `update`, else `create`, with the new inputs; CopyToRemote: refused (it would copy)."""
    if type_ == COPY:
        if preview:
            return dict(news)
        raise _refuse(news)
    previous = {"stdout": state.get("stdout", ""), "stderr": state.get("stderr", "")}
    if preview:
        # infer markComputed: an input that is unknown, or that the old state holds with another value.
        changed = any(news.get(k) == UNKNOWN or (k in state and not equal(news.get(k), state[k]))
                      for k in INPUTS[type_])
        return {**news, **({"stdout": UNKNOWN, "stderr": UNKNOWN} if changed else previous)}
    # commandController.go Update: the new inputs with the old state's stdout/stderr, which stay if nothing runs.
    command = plain(news.get("update")) if news.get("update") is not None else plain(news.get("create"))
    outputs = {**news, **previous}
    if command is not None:
        outputs.update(run(news, command, previous, log, type_))
    return outputs


def delete(type_: str, state: dict, log: Status) -> None:
    """Command: the stored `delete` with the stored connection, stdin and outputs; CopyToRemote: nothing."""
    # commandController.go Delete calls run on req.State, so the old stdin is sent to `delete` as well.
    if type_ in COMMANDS and plain(state.get("delete")) is not None:
        run(state, plain(state["delete"]), {"stdout": state.get("stdout"), "stderr": state.get("stderr")}, log,
            type_)
