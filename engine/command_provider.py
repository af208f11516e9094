"""The command provider the real CLI runs: the stand-in, or any pulumi-resource-command binary named by a variable."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import provider_pb2_grpc

from engine.cache import PULUMI_HOME, REPO, SET, file_sha256

VARIABLE = "ASCEND_NPU_COMMAND_PROVIDER"
STANDIN = REPO / "engine" / "command_standin" / "pulumi-resource-command"
# Nothing listens here: a provider dials its engine lazily, and answering GetPluginInfo needs no engine.
NO_ENGINE = "127.0.0.1:1"


class ProviderChoiceError(ValueError):
    """The variable names no binary the CLI could start; the message says what to write."""


@dataclass(frozen=True)
class CommandProvider:
    """A provider binary, its sha256, and the plugin cache it is registered in."""

    binary: Path
    sha256: str
    pulumi_home: Path

    @property
    def is_standin(self) -> bool:
        return self.binary == STANDIN

    def describe(self, answered: str, registered_as: str) -> str:
        """The line a run starts with: which binary, its sha256, the version it answers with and the one it serves."""
        kind = "the stand-in" if self.is_standin else f"from {VARIABLE}"
        line = (f"command provider ({kind}): {self.binary} sha256 {self.sha256}, answers version {answered}, "
                f"registered as command {registered_as} in {self.pulumi_home}")
        if answered != registered_as:
            line += f" (the SDK asks for {registered_as}: what the end-to-end run proves holds for {answered})"
        return line


def home_for(sha256: str, set_dir: Path = SET) -> Path:
    """The plugin cache of a given binary: one per sha256, so the stand-in's registration is never replaced."""
    return set_dir / "pulumi-homes" / f"command-{sha256[:16]}"


def chosen(environ: Optional[Mapping[str, str]] = None, set_dir: Path = SET) -> CommandProvider:
    """The provider the variable names (a path, relative to the working folder), else the stand-in."""
    env = os.environ if environ is None else environ
    value = env.get(VARIABLE, "").strip()
    if not value:
        return CommandProvider(STANDIN, file_sha256(STANDIN), set_dir / PULUMI_HOME.name)
    binary = Path(value).expanduser().resolve()
    if not binary.is_file():
        raise ProviderChoiceError(f"{VARIABLE}={value}: no such file ({binary}); write the path of a "
                                  "pulumi-resource-command binary, e.g. "
                                  f"{VARIABLE}=$HOME/pulumi-command/bin/pulumi-resource-command, or unset it "
                                  "for the stand-in")
    if not os.access(binary, os.X_OK):
        raise ProviderChoiceError(f"{VARIABLE}={value}: {binary} is not executable; run `chmod +x {binary}`")
    if binary == STANDIN:
        return chosen({}, set_dir)
    sha256 = file_sha256(binary)
    return CommandProvider(binary, sha256, home_for(sha256, set_dir))


def answered_version(binary: Path, timeout: float = 30) -> str:
    """Start the binary as the CLI does and ask its GetPluginInfo; a binary that does not answer says why."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env["ASCEND_NPU_REPO"] = str(REPO)
    proc = subprocess.Popen([str(binary), NO_ENGINE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        port = _first_line(proc, timeout)
        if not port.isdigit():
            proc.kill()
            said = (proc.stderr.read() if proc.stderr else "").strip().splitlines()[-1:] or [port]
            return f"nothing: it printed {said[0]!r} where a port was expected"
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = provider_pb2_grpc.ResourceProviderStub(channel).GetPluginInfo(empty_pb2.Empty(), timeout=timeout)
        return info.version or "nothing: GetPluginInfo gave no version"
    except grpc.RpcError as failure:
        return f"nothing: GetPluginInfo failed: {failure.details() if hasattr(failure, 'details') else failure}"
    except TimeoutError as failure:
        return f"nothing: {failure}"
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    import selectors
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError(f"no port printed within {timeout:.0f} s")
    return proc.stdout.readline().strip() if proc.stdout else ""
