"""The Pulumi CLI that `make engine` built, run offline and hermetic, with this program served to it."""
from __future__ import annotations

import filecmp
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from engine.cache import BIN, PULUMI_HOME, REPO, SET, locked

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


def cli_env(backend: Path, passphrase: str, kubeconfig: Optional[Path] = None) -> dict[str, str]:
    """The CLI's environment: a file backend, passphrase secrets, no network, no plugin but those registered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBECONFIG", "SSH_AUTH_SOCK"))}
    env.update({
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PULUMI_HOME": str(PULUMI_HOME),
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


def install_plugins() -> None:
    """Register the built providers under the versions the SDKs ask for, once per set (whichever clone comes first)."""
    env = cli_env(SET / "state-unused", "unused")
    # The command provider is a stand-in (engine/command_standin): its Go module is not served by the proxy.
    wanted = [("kubernetes", sdk_plugin_version("pulumi_kubernetes"), BIN / "pulumi-resource-kubernetes"),
              ("command", sdk_plugin_version("pulumi_command"),
               REPO / "engine" / "command_standin" / "pulumi-resource-command")]
    with locked():
        for name, version, binary in wanted:
            target = PULUMI_HOME / "plugins" / f"resource-{name}-v{version}" / f"pulumi-resource-{name}"
            # The registered copy is the binary, byte for byte (a copy cut short by a killed install is made again).
            if target.exists() and filecmp.cmp(target, binary, shallow=False):
                print(f"engine: plugin {name} {version}: registered")
                continue
            subprocess.run([str(BIN / "pulumi"), "plugin", "install", "resource", name, version, "--file",
                            str(binary)], env=env, check=True, capture_output=True, text=True)
            print(f"engine: plugin {name} {version}: registered from {binary.name}")
    version = subprocess.run([str(BIN / "pulumi"), "version"], env=env, capture_output=True, text=True).stdout.strip()
    print(f"engine: pulumi CLI {version} at {BIN / 'pulumi'}")


@dataclass
class ProgramHost:
    """This program served over the language runtime protocol while a `pulumi` command runs (see program_host)."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    address: str = ""
    _proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> ProgramHost:
        env = {**self.env, "ASCEND_NPU_PROGRAM_CWD": str(self.cwd), "PYTHONUNBUFFERED": "1"}
        self._proc = subprocess.Popen([sys.executable, "-m", "engine.program_host"], cwd=REPO, env=env,
                                      stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        line = self._proc.stdout.readline().strip()
        if not line.isdigit():
            self._proc.kill()
            raise RuntimeError(f"the program host did not start (printed {line!r})")
        self.address = f"127.0.0.1:{line}"
        return self

    def __exit__(self, *exc) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()


if __name__ == "__main__":
    install_plugins()
