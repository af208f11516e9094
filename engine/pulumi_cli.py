"""The Pulumi CLI that `make engine` built, run offline and hermetic, with this program served to it."""
from __future__ import annotations

import ctypes
import filecmp
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from engine.cache import BIN, REPO, SET, locked
from engine.command_provider import CommandProvider, ProviderChoiceError, answered_version, chosen

POLICY_LAUNCHER = REPO / "engine" / "run-policy-pack"


def versions() -> dict[str, str]:
    """engine/versions.sh as a mapping."""
    text = (REPO / "engine" / "versions.sh").read_text()
    return dict(re.findall(r"^([A-Z_]+)=(\S+)$", text, re.MULTILINE))


def sdk_plugin_version(package: str) -> str:
    """The plugin version a provider SDK asks the engine for (its `pulumi-plugin.json`)."""
    import importlib.util
    spec = importlib.util.find_spec(package)
    return json.loads((Path(spec.origin).parent / "pulumi-plugin.json").read_text())["version"]


def cli_env(backend: Path, passphrase: str, kubeconfig: Optional[Path] = None,
            provider: Optional[CommandProvider] = None) -> dict[str, str]:
    """The CLI's environment: a file backend, passphrase secrets, no network, no plugin but those registered
    (in the plugin cache of the command provider chosen, engine/command_provider.py)."""
    home = (provider or chosen()).pulumi_home
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBECONFIG", "SSH_AUTH_SOCK"))}
    env.update({
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PULUMI_HOME": str(home),
        "PULUMI_BACKEND_URL": f"file://{backend}",
        "PULUMI_CONFIG_PASSPHRASE": passphrase,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_IGNORE_AMBIENT_PLUGINS": "true",
        "PULUMI_CREDENTIAL_STORE": "plaintext",
        "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "NO_COLOR": "1",
        # The registered command stand-in runs from the shared plugin cache: this names the clone it serves.
        "ASCEND_NPU_REPO": str(REPO),
    })
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    return env


def install_plugins(provider: Optional[CommandProvider] = None) -> CommandProvider:
    """Register the built providers under the versions the SDKs ask for, once per set and command provider (whichever
    clone comes first), in that provider's plugin cache; says which command provider the CLI will run."""
    provider = provider or chosen()
    env = cli_env(SET / "state-unused", "unused", provider=provider)
    # The command provider is the stand-in (engine/command_standin) unless ASCEND_NPU_COMMAND_PROVIDER names one:
    # its Go module is not served by the proxy. Either is registered as the version the SDK asks for.
    command = sdk_plugin_version("pulumi_command")
    wanted = [("kubernetes", sdk_plugin_version("pulumi_kubernetes"), BIN / "pulumi-resource-kubernetes"),
              ("command", command, provider.binary)]
    with locked():
        for name, version, binary in wanted:
            print(f"engine: plugin {name} {version}: {register(provider.pulumi_home, name, version, binary, env)}")
    version = subprocess.run([str(BIN / "pulumi"), "version"], env=env, capture_output=True, text=True).stdout.strip()
    print(f"engine: pulumi CLI {version} at {BIN / 'pulumi'}")
    print(f"engine: {provider.describe(answered_version(provider.binary), command)}", flush=True)
    return provider


def register(home: Path, name: str, version: str, binary: Path, env: dict[str, str]) -> str:
    """BINARY as plugin NAME at VERSION in the plugin cache HOME, unless that copy is already the binary."""
    target = home / "plugins" / f"resource-{name}-v{version}" / f"pulumi-resource-{name}"
    # The registered copy is the binary, byte for byte (a copy cut short by a killed install is made again).
    if target.exists() and filecmp.cmp(target, binary, shallow=False):
        return "registered"
    subprocess.run([str(BIN / "pulumi"), "plugin", "install", "resource", name, version, "--file", str(binary)],
                   env={**env, "PULUMI_HOME": str(home)}, check=True, capture_output=True, text=True)
    return f"registered from {binary}"


PR_SET_PDEATHSIG = 1


def _stop_with_parent() -> None:
    """SIGTERM, on which the program host stops, when the thread that started it ends, even killed."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class ProgramHost:
    """This program served over the language runtime protocol while a `pulumi` command runs (see program_host)."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    address: str = ""
    _proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> ProgramHost:
        env = {**self.env, "ASCEND_NPU_PROGRAM_CWD": str(self.cwd), "PYTHONUNBUFFERED": "1"}
        # The project's virtualenv when it has one, as the language host takes Pulumi.yaml's `virtualenv`.
        venv = self.cwd / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        # Tied to its starter: a killed bench or test run left it serving, and using CPU, with no client.
        self._proc = subprocess.Popen([python, str(REPO / "engine" / "program_host.py")], cwd=REPO, env=env,
                                      stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                      preexec_fn=_stop_with_parent)
        line = self._proc.stdout.readline().strip()
        if not line.isdigit():
            self._proc.kill()
            raise RuntimeError(f"the program host did not start (printed {line!r})")
        self.address = f"127.0.0.1:{line}"
        return self

    @property
    def pid(self) -> int:
        """The program host's process id (0 before it starts)."""
        return self._proc.pid if self._proc is not None else 0

    def __exit__(self, *exc) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()


if __name__ == "__main__":
    try:
        install_plugins()
    except ProviderChoiceError as problem:
        sys.exit(f"engine: {problem}")
