"""An exec credential plugin (client.authentication.k8s.io v1 or v1beta1), run and cached as client-go runs it."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Optional

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
MODES = ("Never", "IfAvailable", "Always")
# The key of a cluster's `extensions` entry handed to the plugin as spec.cluster.config.
CLUSTER_CONFIG = "client.authentication.k8s.io/exec"
NOT_INSTALLED = ("the credential plugin is not installed; see https://kubernetes.io/docs/reference/access-authn-authz/"
                 "authentication/#client-go-credential-plugins")
# Only a plugin that cannot ask anyone anything is bounded; an interactive one waits for its user.
TIMEOUT = 60


class PluginError(RuntimeError):
    """The plugin could not be run, or its answer is not a usable ExecCredential."""


@dataclass(frozen=True)
class Credentials:
    """What one run of the plugin gave: a token, a client pair, or both; `expires` in epoch seconds or None."""

    token: Optional[str] = field(default=None, repr=False)
    cert_pem: Optional[str] = None
    key_pem: Optional[str] = field(default=None, repr=False)
    expires: Optional[float] = None


def check_spec(spec: dict) -> dict:
    """The spec with client-go's defaults, or PluginError naming what is wrong (clientcmd validation.go)."""
    if not spec.get("command"):
        raise PluginError("exec: command must be specified")
    version = spec.get("apiVersion") or ""
    if version not in API_VERSIONS:
        raise PluginError(f"exec: apiVersion {version!r} is not one of {', '.join(API_VERSIONS)}")
    if any(not e.get("name") for e in spec.get("env") or []):
        raise PluginError("exec: every env entry needs a name")
    mode = spec.get("interactiveMode") or ("IfAvailable" if version.endswith("v1beta1") else "")
    if mode not in MODES:
        raise PluginError(f"exec: interactiveMode must be one of {', '.join(MODES)} for {version}, not {mode!r}")
    return {**spec, "interactiveMode": mode}


class ExecPlugin:
    """One kubeconfig user's plugin: run when there is no credential yet, once it expired, or after a 401."""

    def __init__(self, spec: dict, cluster: Optional[dict] = None, now: Callable[[], float] = time.time,
                 stdin_is_tty: Callable[[], bool] = lambda: sys.stdin is not None and sys.stdin.isatty()):
        self.spec, self.cluster, self.now, self.stdin_is_tty = check_spec(spec), cluster, now, stdin_is_tty
        self.command = self.spec["command"]
        self.calls = 0
        self._cached: Optional[Credentials] = None
        self._lock = threading.Lock()

    def credentials(self) -> Credentials:
        """The cached credential unless it expired, else a fresh one."""
        with self._lock:
            cached = self._cached
            if cached is None or (cached.expires is not None and self.now() > cached.expires):
                cached = self._cached = self._run()
            return cached

    def refresh(self, used: Credentials) -> Credentials:
        """After a 401 with USED: a fresh credential, unless another call already replaced USED."""
        with self._lock:
            cached = self._cached
            if cached is None or cached is used:
                cached = self._cached = self._run()
            return cached

    def _interactive(self) -> bool:
        mode = self.spec["interactiveMode"]
        if mode == "Never":
            return False
        if mode == "Always" and not self.stdin_is_tty():
            raise PluginError("interactiveMode Always, but standard input is not a terminal")
        return self.stdin_is_tty()

    def _run(self) -> Credentials:
        interactive = self._interactive()
        version = self.spec["apiVersion"]
        request = {"apiVersion": version, "kind": "ExecCredential", "spec": {"interactive": interactive}}
        if self.spec.get("provideClusterInfo") and self.cluster is not None:
            request["spec"]["cluster"] = self.cluster
        # The caller's environment, then the kubeconfig's entries, then the request: the last of a name wins.
        env = {**os.environ, **{e["name"]: str(e.get("value", "")) for e in self.spec.get("env") or []},
               "KUBERNETES_EXEC_INFO": json.dumps(request)}
        self.calls += 1
        try:
            done = subprocess.run([self.command, *(self.spec.get("args") or [])], env=env, stdout=subprocess.PIPE,
                                  stdin=None if interactive else subprocess.DEVNULL, text=True,
                                  timeout=None if interactive else TIMEOUT)
        except FileNotFoundError:
            hint = self.spec.get("installHint")
            raise PluginError(f"executable {self.command} not found: {NOT_INSTALLED}"
                              + (f". {hint.strip()}" if hint else "")) from None
        except subprocess.TimeoutExpired:
            raise PluginError(f"executable {self.command} gave no answer within {TIMEOUT} s") from None
        except OSError as err:
            raise PluginError(f"executable {self.command} could not run: {err}") from None
        if done.returncode != 0:
            raise PluginError(f"executable {self.command} failed with exit code {done.returncode}")
        return self._decode(done.stdout, version)

    def _decode(self, stdout: str, version: str) -> Credentials:
        try:
            answer = json.loads(stdout)
        except ValueError:
            raise PluginError(f"decoding stdout: not JSON: {stdout[:200]!r}") from None
        if not isinstance(answer, dict) or answer.get("kind") != "ExecCredential":
            raise PluginError("decoding stdout: not an ExecCredential")
        if answer.get("apiVersion") != version:
            raise PluginError(f"the plugin is configured for {version}, it answered {answer.get('apiVersion')}")
        status = answer.get("status")
        if not isinstance(status, dict):
            raise PluginError("the plugin's answer has no status")
        token, cert, key = status.get("token"), status.get("clientCertificateData"), status.get("clientKeyData")
        if not (token or cert or key):
            raise PluginError("the plugin gave neither a token nor a client certificate and key")
        if bool(cert) != bool(key):
            raise PluginError("the plugin gave only one of clientCertificateData and clientKeyData")
        expires = status.get("expirationTimestamp")
        try:
            when = datetime.fromisoformat(expires).timestamp() if expires else None
        except ValueError:
            raise PluginError(f"status.expirationTimestamp {expires!r} is not an RFC 3339 time") from None
        return Credentials(token=token or None, cert_pem=cert or None, key_pem=key or None, expires=when)


def cluster_info(cluster: dict, server: str, ca_pem: Optional[str]) -> dict:
    """spec.cluster of the request, as client-go fills it for provideClusterInfo (rest/exec.go)."""
    info: dict = {"server": server}
    if cluster.get("insecure-skip-tls-verify"):
        info["insecure-skip-tls-verify"] = True
    if ca_pem:
        info["certificate-authority-data"] = base64.b64encode(ca_pem.encode()).decode()
    if cluster.get("proxy-url"):
        info["proxy-url"] = cluster["proxy-url"]
    if cluster.get("disable-compression"):
        info["disable-compression"] = True
    for entry in cluster.get("extensions") or []:
        if entry.get("name") == CLUSTER_CONFIG:
            info["config"] = entry.get("extension")
    return info
