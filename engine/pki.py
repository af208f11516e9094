"""The local control plane's certificates and kubeconfigs, made with the openssl command line tool."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

# Who signs in with a client certificate: CN is the user, O the group (RBAC reads both).
CLIENTS = {
    "admin": ("ascend-npu-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", ""),
    "scheduler": ("system:kube-scheduler", ""),
    # kwok acts as every simulated node's kubelet; system:masters spares a role that mirrors the node authorizer.
    "kwok": ("kwok-controller", "system:masters"),
}
SERVER_NAMES = ("DNS:localhost", "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
                "IP:127.0.0.1")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _signed(pki: Path, name: str, subject: str, extensions: list[str]) -> None:
    """`name`.key and `name`.crt signed by the cluster's CA, with the given extensions."""
    addext = [arg for ext in extensions for arg in ("-addext", ext)]
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", subject, *addext, cwd=pki)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "3650", "-copy_extensions", "copy", "-out", f"{name}.crt", cwd=pki)
    (pki / f"{name}.csr").unlink()


def make_pki(pki: Path) -> None:
    """A CA, the API server's serving certificate, one client certificate per component, the SA signing key."""
    if (pki / "ca.crt").exists():
        return
    pki.mkdir(parents=True, exist_ok=True)
    pki.chmod(0o700)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
             "-subj", "/CN=ascend-npu-local-ca", cwd=pki)
    _signed(pki, "apiserver", "/CN=kube-apiserver",
            ["subjectAltName=" + ",".join(SERVER_NAMES), "extendedKeyUsage=serverAuth"])
    for name, (user, group) in CLIENTS.items():
        subject = f"/CN={user}" + (f"/O={group}" if group else "")
        _signed(pki, name, subject, ["extendedKeyUsage=clientAuth"])
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def write_kubeconfig(path: Path, server: str, pki: Path, user: str, context: str) -> None:
    """A kubeconfig (JSON is YAML) for `user`'s client certificate, its one context named `context`."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": context, "cluster": {"server": server,
                                                   "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": user, "user": {"client-certificate": str(pki / f"{user}.crt"),
                                          "client-key": str(pki / f"{user}.key")}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": user}}],
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)
