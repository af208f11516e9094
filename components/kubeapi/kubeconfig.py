"""A kubeconfig context as kubectl reads it: files from KUBECONFIG (merged, first wins) or ~/.kube/config."""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from components.kubeapi.exec_plugin import Credentials, ExecPlugin, PluginError, cluster_info


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
    plugin: Optional[ExecPlugin] = field(default=None, repr=False, compare=False)

    def credentials(self) -> Credentials:
        """The exec plugin's current credential, or the kubeconfig's own."""
        if self.plugin is None:
            return Credentials(token=self.token, cert_pem=self.cert_pem, key_pem=self.key_pem)
        try:
            return self.plugin.credentials()
        except PluginError as err:
            raise exec_failed(self.context, self.plugin.command, err) from None

    def refreshed(self, used: Credentials) -> Optional[Credentials]:
        """After a 401 with USED: the plugin's next credential, or None when there is no plugin to ask."""
        if self.plugin is None:
            return None
        try:
            return self.plugin.refresh(used)
        except PluginError as err:
            raise exec_failed(self.context, self.plugin.command, err) from None


def pki_endpoint(server: str, pki: Path, user: str = "admin", context: str = "local") -> Endpoint:
    """SERVER reached with PEM files in PKI: ca.crt, and USER.crt with USER.key."""
    return Endpoint(context=context, server=server.rstrip("/"), ca_pem=(pki / "ca.crt").read_text(),
                    cert_pem=(pki / f"{user}.crt").read_text(), key_pem=(pki / f"{user}.key").read_text())


def kubeconfig_files(env: Optional[dict] = None) -> list[Path]:
    """KUBECONFIG's files that exist, in order, or ~/.kube/config."""
    environ = os.environ if env is None else env
    listed = [Path(p).expanduser() for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
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
    if user.get("exec") and user.get("auth-provider"):
        raise KubeconfigError(f"context {name!r}: its user has both exec and auth-provider; keep one")
    if user.get("auth-provider"):
        raise KubeconfigError(f"context {name!r}: auth-provider {user['auth-provider'].get('name')!r} is not "
                              "supported; use an exec credential plugin or a token")
    # As client-go: a token, a username or a client pair in the kubeconfig wins over the plugin.
    if user.get("exec") and not (endpoint.token or endpoint.basic or (endpoint.cert_pem and endpoint.key_pem)):
        return _with_exec(endpoint, user["exec"], cluster)
    return endpoint


def _token(user: dict, base: Path) -> Optional[str]:
    if user.get("token"):
        return user["token"]
    if user.get("tokenFile"):
        path = Path(user["tokenFile"]).expanduser()
        return (path if path.is_absolute() else base.parent / path).read_text().strip()
    return None


def _with_exec(endpoint: Endpoint, spec: dict, cluster: dict) -> Endpoint:
    """The endpoint with its plugin, run once now so that a broken one stops before any work starts."""
    try:
        plugin = ExecPlugin(spec, cluster_info(cluster, endpoint.server, endpoint.ca_pem))
        plugin.credentials()
    except PluginError as err:
        raise exec_failed(endpoint.context, spec.get("command"), err) from None
    return Endpoint(**{**endpoint.__dict__, "plugin": plugin})


def exec_failed(context: str, command: Optional[str], err: Exception) -> KubeconfigError:
    """The error a failed plugin run gives: the context, the plugin and why."""
    return KubeconfigError(f"context {context!r}: exec credential plugin {command!r}: {err}")
