"""Stand-in for pulumi-command's local.Command v1.2.1: a shell command on the machine that runs the engine."""
# Reproduces pulumi/pulumi-command v1.2.1 provider/pkg/provider/local/{commandController.go, commandOutputs.go
# (run), base.go}: `/bin/sh -c COMMAND` (or the interpreter given), in `dir` or the provider's working directory,
# with the provider's environment plus `environment` plus the previous stdout/stderr, stdin when non-empty.
# assetPaths and archivePaths are not served: the program does not use them.
from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Callable

from .processes import collect, forget, spawn
from .props import logged_streams, plain, run_env

LOCAL = "command:local:Command"
INPUTS = ("triggers", "create", "update", "delete", "stdin", "logging", "interpreter", "dir", "environment",
          "addPreviousOutputInEnv")


class LocalError(Exception):
    """The command failed as v1.2.1 reports it: `exit status N: running "COMMAND":` and what it printed."""


def run(props: dict, command: str, previous: dict, log: Callable[[str], None]) -> dict:
    """commandOutputs.go run: the command's stdout and stderr, each without its last newline."""
    p = plain(props)
    args = list(p.get("interpreter") or ["/bin/sh", "-c"]) + [command]
    env = {**os.environ, **run_env(p, previous)}
    stdin = p.get("stdin") or None
    try:
        proc = spawn(args, cwd=p.get("dir") or os.getcwd(), env=env,
                     stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as err:
        raise LocalError(f"{err}: running {_quote(command)}:\n") from None
    try:
        result = collect(proc, stdin, logged_streams(p), log)
    finally:
        forget(proc)
    if result.code != 0:
        what = f"exit status {result.code}" if result.code > 0 else f"signal: {_signal(-result.code)}"
        raise LocalError(f"{what}: running {_quote(command)}:\n{result.combined}")
    return {"stdout": result.stdout.removesuffix("\n"), "stderr": result.stderr.removesuffix("\n")}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _signal(number: int) -> str:
    """The signal as Go's os.ProcessState says it ("killed", "terminated"): its strsignal, lowercased."""
    try:
        return (signal.strsignal(number) or str(number)).lower()
    except ValueError:
        return str(number)
