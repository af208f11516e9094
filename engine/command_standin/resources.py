"""Stand-in for pulumi-command: what remote.Command and remote.CopyToRemote do in v1.2.1, per gRPC call."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/remote/{command.go, commandController.go,
# commandOutputs.go, copy.go, copyController.go}, common/inputs.go, and the generic Check/Diff/Create/Update of
# pulumi/pulumi-go-provider v1.3.0 infer/resource.go and infer/apply_secrets.go that they rely on.
from __future__ import annotations

import json
import secrets
import subprocess
from typing import Callable

from . import env_requests, local, sftp
from .props import (
    ARCHIVE_SIG,
    ASSET_SIG,
    SIG,
    UNKNOWN,
    Secret,
    detailed_diff,
    equal,
    logged_streams,
    plain,
    run_env,
    source_hash,
)
from .ssh import Link, SSHError

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
    source = plain(inputs.get("source"))
    if type_ == COPY and isinstance(source, dict):
        kind = source.get(SIG)
        if kind not in (ASSET_SIG, ARCHIVE_SIG):
            failures.append(("asset", "either asset or archive must be set"))
        elif kind == ASSET_SIG and "path" not in source and "text" not in source:
            failures.append(("asset", "asset must be a path-based file asset or a text asset"))
        elif kind == ARCHIVE_SIG and "path" not in source:
            failures.append(("archive", "archive must be a path to a file or directory"))
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


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # close to Go's %q


def run(props: dict, command: str, previous: dict, status: Status, log: Status, type_: str = COMMAND) -> dict:
    """CommandOutputs.run: one session, previous outputs in PULUMI_COMMAND_STDOUT/STDERR, stdin when non-empty."""
    if type_ == LOCAL:
        try:
            return local.run(props, command, previous, log)
        except local.LocalError as err:
            raise CommandError(str(err)) from None
    p = plain(props)
    env = run_env(p, previous)
    try:
        with Link(p["connection"], status) as link:
            env_requests.check(link, p.get("environment") or {}, env, log)
            result = link.run(command, p.get("stdin") or None, env, logged_streams(p), log)
            lost = result.code < 0 or (result.code == 255 and not link.alive())
    except (SSHError, env_requests.Refused, OSError, subprocess.SubprocessError) as err:
        raise CommandError(str(err)) from None
    if lost:
        raise CommandError(f"wait: remote command exited without exit status or exit signal: running "
                           f"{_quote(command)}:\n{result.combined}")
    if result.code != 0:
        raise CommandError(f"Process exited with status {result.code}: running {_quote(command)}:\n"
                           f"{result.combined}")
    return {"stdout": result.stdout.removesuffix("\n"), "stderr": result.stderr.removesuffix("\n")}


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(4)  # resource.NewUniqueHex(prefix, 8, 0)


def copy_source(inputs: dict, status: Status) -> None:
    """copyToRemote (remote/copyController.go): dial, open SFTP, copy."""
    p = plain(inputs)
    try:
        with Link(p["connection"], status, keep_target=False) as link:
            proc = link.client(["-s"], ["sftp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
            try:
                sftp.copy(sftp.Client(proc.stdout, proc.stdin), p["source"], p["remotePath"])
            finally:
                proc.stdin.close()
                proc.wait()
                proc.stdout.close()
    except sftp.SFTPError as err:
        raise CommandError(str(err) if err.code != 7 else "ssh: subsystem request failed") from None
    except (SSHError, OSError, subprocess.SubprocessError) as err:
        raise CommandError(str(err)) from None


def create(type_: str, name: str, inputs: dict, preview: bool, status: Status, log: Status) -> tuple[str, dict]:
    """Command.Create and CopyToRemote.Create: nothing runs in a preview, where stdout and stderr are unknown."""
    # copyController.go Create: a preview answers no id; a copy's id is NewUniqueHex("", 8, 0).
    if type_ == COPY:
        if preview:
            return "", dict(inputs)
        copy_source(inputs, status)
        return new_id(""), dict(inputs)
    # commandController.go Create: the id is NewUniqueHex(name, 8, 0) even in a preview; infer markComputed makes
    # the outputs that mirror no input unknown during a create's preview.
    if preview:
        return new_id(name), {**inputs, "stdout": UNKNOWN, "stderr": UNKNOWN}
    outputs = {**inputs, "stdout": "", "stderr": ""}
    if plain(inputs.get("create")) is not None:
        outputs.update(run(inputs, plain(inputs["create"]), {}, status, log, type_))
    return new_id(name), outputs


def update(type_: str, state: dict, news: dict, preview: bool, status: Status, log: Status) -> dict:
    """Command: run `update`, else `create`, with the new inputs; CopyToRemote: copy when hash or path changed."""
    if type_ == COPY:  # copyController.go Update: needCopy, the connection and triggers alone copy nothing
        moved = news.get("remotePath") != state.get("remotePath")
        if not preview and (moved or source_hash(plain(news["source"])) != source_hash(plain(state["source"]))):
            copy_source(news, status)
        return dict(news)
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
        outputs.update(run(news, command, previous, status, log, type_))
    return outputs


def delete(type_: str, state: dict, status: Status, log: Status) -> None:
    """Command: the stored `delete` with the stored connection, stdin and outputs; CopyToRemote: nothing."""
    # commandController.go Delete calls run on req.State, so the old stdin is sent to `delete` as well.
    if type_ in COMMANDS and plain(state.get("delete")) is not None:
        run(state, plain(state["delete"]), {"stdout": state.get("stdout"), "stderr": state.get("stderr")},
            status, log, type_)
