"""A kubeconfig context as kubectl reads it: files from KUBECONFIG (merged, first wins) or ~/.kube/config."""
from __future__ import annotations

import base64
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

EXEC_TIMEOUT = 60


class KubeconfigError(RuntimeError):
    """The kubeconfig cannot give a usable context; the message says which file, context or field."""


@dataclass(frozen=True)
class Endpoint:
    """One API server and how to authenticate to it (PEM text, never written anywhere but a private temp file)."""

    context: str
    server: str
    ca_pem: Optional[str] = None
    insecure: bool = False
    cert_pem: Optional[str] = None
    key_pem: Optional[str] = None
    token: Optional[str] = field(default=None, repr=False)
    basic: Optional[tuple[str, str]] = field(default=None, repr=False)


def kubeconfig_files(env: Optional[dict] = None) -> list[Path]:
    """KUBECONFIG's files that exist, in order, or ~/.kube/config."""
    env = os.environ if env is None else env
    listed = [Path(p).expanduser() for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    files = [p for p in listed if p.is_file()] if listed else [Path("~/.kube/config").expanduser()]
    return [p for p in files if p.is_file()]


def _merged(files: list[Path]) -> tuple[dict, Optional[str]]:
    """Named clusters, users and contexts of every file (the first definition wins), and the current context."""
    named: dict[str, dict[str, tuple[dict, Path]]] = {"clusters": {}, "users": {}, "contexts": {}}
    current = None
    for path in files:
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            raise KubeconfigError(f"{path}: not a readable kubeconfig ({err})") from None
        current = current or doc.get("current-context") or None
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for entry in doc.get(section) or []:
                named[section].setdefault(entry.get("name"), (entry.get(inner) or {}, path))
    return named, current


def _read(value: dict, key: str, base: Path) -> Optional[str]:
    """KEY-data (base64) or KEY (a file, relative to its kubeconfig), as text."""
    if value.get(f"{key}-data"):
        return base64.b64decode(value[f"{key}-data"]).decode()
    if value.get(key):
        path = Path(value[key]).expanduser()
        return (path if path.is_absolute() else base.parent / path).read_text()
    return None


def load_endpoint(context: Optional[str] = None, env: Optional[dict] = None) -> Endpoint:
    """The endpoint of CONTEXT (default: the current context), with its credentials resolved."""
    files = kubeconfig_files(env)
    if not files:
        raise KubeconfigError("no kubeconfig: set KUBECONFIG or write ~/.kube/config (the same one the kubernetes "
                              "provider of this stack uses)")
    named, current = _merged(files)
    name = context or current
    if not name or name not in named["contexts"]:
        raise KubeconfigError(f"context {name!r} is not in {', '.join(map(str, files))}; set cluster.kubeContext "
                              f"to one of: {', '.join(sorted(n for n in named['contexts'] if n)) or 'none'}")
    ctx, _ = named["contexts"][name]
    cluster, cluster_file = named["clusters"].get(ctx.get("cluster"), ({}, files[0]))
    user, user_file = named["users"].get(ctx.get("user"), ({}, files[0]))
    if not cluster.get("server"):
        raise KubeconfigError(f"context {name!r}: its cluster {ctx.get('cluster')!r} has no server")
    if cluster.get("tls-server-name"):
        raise KubeconfigError(f"context {name!r}: tls-server-name is not supported; point `server` at a name "
                              "the API server's certificate carries")
    try:
        endpoint = Endpoint(context=name, server=cluster["server"].rstrip("/"),
                            ca_pem=_read(cluster, "certificate-authority", cluster_file),
                            insecure=bool(cluster.get("insecure-skip-tls-verify")),
                            cert_pem=_read(user, "client-certificate", user_file),
                            key_pem=_read(user, "client-key", user_file), token=_token(user, user_file),
                            basic=(user["username"], user.get("password", "")) if user.get("username") else None)
    except (OSError, ValueError) as err:
        raise KubeconfigError(f"context {name!r}: {err}") from None
    if user.get("exec"):
        return _with_exec(endpoint, user["exec"], name)
    if user.get("auth-provider"):
        raise KubeconfigError(f"context {name!r}: auth-provider {user['auth-provider'].get('name')!r} is not "
                              "supported; use an exec credential plugin or a token")
    return endpoint


def _token(user: dict, base: Path) -> Optional[str]:
    if user.get("token"):
        return user["token"]
    if user.get("tokenFile"):
        path = Path(user["tokenFile"]).expanduser()
        return (path if path.is_absolute() else base.parent / path).read_text().strip()
    return None


def _with_exec(endpoint: Endpoint, spec: dict, context: str) -> Endpoint:
    """An exec credential plugin's answer (client.authentication.k8s.io ExecCredential): a token or a client pair."""
    env = {**os.environ, **{e["name"]: e["value"] for e in spec.get("env") or []}}
    request = {"apiVersion": spec.get("apiVersion", "client.authentication.k8s.io/v1"), "kind": "ExecCredential",
               "spec": {"interactive": False}}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(request)
    try:
        done = subprocess.run([spec["command"], *(spec.get("args") or [])], env=env, capture_output=True,
                              text=True, timeout=EXEC_TIMEOUT, stdin=subprocess.DEVNULL)
        status = json.loads(done.stdout).get("status") or {} if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError) as err:
        raise KubeconfigError(f"context {context!r}: exec credential plugin failed: {err}") from None
    if status is None:
        raise KubeconfigError(f"context {context!r}: exec credential plugin {spec['command']!r} exited "
                              f"{done.returncode}: {done.stderr.strip()[:300]}")
    return Endpoint(**{**endpoint.__dict__, "token": status.get("token") or endpoint.token,
                       "cert_pem": status.get("clientCertificateData") or endpoint.cert_pem,
                       "key_pem": status.get("clientKeyData") or endpoint.key_pem})
