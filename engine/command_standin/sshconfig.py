"""Stand-in for pulumi-command: one OpenSSH `Host` block per hop, from v1.2.1's connection fields (connection.go)."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/remote/connection.go (SSHConfig),
# connection_unix.go and proxyConnection.go.
from __future__ import annotations

import base64
import os
import re
import socket
import struct
import subprocess

TARGET, PROXY = "standin-target", "standin-proxy"
# Hosts and users go into an ssh_config line: anything that could be read as more than one word is refused.
PLAIN = re.compile(r"^[A-Za-z0-9._:@+\[\]-]+$")
KEY_TYPE = re.compile(r"^(ssh|ecdsa|sk)-[a-z0-9@.-]+$")


def join_host_port(host: str, port) -> str:
    """net.JoinHostPort: brackets around an IPv6 address."""
    port = int(port) if port is not None else 22
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class SSHError(Exception):
    """A dial, key or session error, worded as pulumi-command v1.2.1 words it where OpenSSH lets us tell."""


def _write(path: str, text: str, mode: int = 0o600) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _askpass(directory: str, name: str, secret: str) -> str:
    """A program that prints SECRET, for OpenSSH's SSH_ASKPASS (the secret never goes on a command line)."""
    secret_file = _write(os.path.join(directory, f"{name}.secret"), secret)
    return _write(os.path.join(directory, f"{name}.askpass"), f"#!/bin/sh\ncat '{secret_file}'\n", 0o700)


def parse_host_key(text: str) -> tuple[str, str]:
    """ssh.ParseAuthorizedKey's reading of hostKey: optional options, then `label base64 [comment]`; the key's type
    is the blob's own, whatever the label says (golang.org/x/crypto v0.48.0 ssh/keys.go:224-231)."""
    words = text.split()
    for i in range(len(words) - 1):
        try:
            blob = base64.b64decode(words[i + 1], validate=True)
            (size,) = struct.unpack(">I", blob[:4])
        except (ValueError, struct.error):
            continue
        kind = blob[4:4 + size].decode(errors="replace")
        if KEY_TYPE.match(kind):
            return kind, words[i + 1]
    raise SSHError("failed to parse host key: ssh: no key found")


def _private_key(directory: str, alias: str, key: str, passphrase: str | None) -> str:
    """The key in a 0600 file, decrypted with privateKeyPassword, refused before any dial if unreadable."""
    path = _write(os.path.join(directory, f"{alias}.key"), key if key.endswith("\n") else key + "\n")
    env = {**os.environ, "SSH_ASKPASS_REQUIRE": "force", "SSH_ASKPASS": "/bin/false"}
    if passphrase is not None:
        env["SSH_ASKPASS"] = _askpass(directory, f"{alias}.key", passphrase)
        done = subprocess.run(["ssh-keygen", "-q", "-p", "-N", "", "-f", path], env=env, capture_output=True,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SSHError("x509: decryption password incorrect")
    check = subprocess.run(["ssh-keygen", "-y", "-f", path], env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if check.returncode != 0:
        said = check.stderr.decode(errors="replace")
        raise SSHError("ssh: this private key is passphrase protected" if "passphrase" in said
                     else "ssh: no key found")
    return path


def _agent(hop: dict) -> str | None:
    """agentSocketPath, else SSH_AUTH_SOCK; a socket that cannot be reached fails as net.Dial("unix") does."""
    path = hop.get("agentSocketPath") or os.environ.get("SSH_AUTH_SOCK") or None
    if path:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
            except OSError as err:
                raise SSHError(f"dial unix {path}: connect: {os.strerror(err.errno or 0).lower()}") from None
    return path


def host_block(directory: str, alias: str, hop: dict, proxy_command: str | None) -> tuple[str, dict]:
    """SSHConfig (connection.go) as OpenSSH options, and the environment the hop's master process runs with."""
    host, user, port = hop.get("host") or "", hop.get("user") or "root", int(hop.get("port") or 22)
    for field, value in (("host", host), ("user", user)):
        if not PLAIN.match(value):
            raise SSHError(f"the stand-in cannot pass {field} {value!r} to OpenSSH")
    timeout = int(hop.get("perDialTimeout") if hop.get("perDialTimeout") is not None else 15)
    env = dict(os.environ)
    lines = [f"Host {alias}", f"HostName {host}", f"Port {port}", f"User {user}",
             f"HostKeyAlias {alias}", "CheckHostIP no", "GlobalKnownHostsFile /dev/null", "LogLevel ERROR",
             f"ControlPath {directory}/{alias}.sock", "ForwardAgent no", "ClearAllForwardings yes",
             "UpdateHostKeys no", "RequestTTY no", "PreferredAuthentications publickey,keyboard-interactive,password"]
    if timeout > 0:
        lines.append(f"ConnectTimeout {timeout}")
    if hop.get("hostKey"):
        kind, blob = parse_host_key(hop["hostKey"])
        known = _write(os.path.join(directory, f"{alias}.known_hosts"), f"{alias} {kind} {blob}\n")
        # ssh.FixedHostKey plus HostKeyAlgorithms = [the pinned key's type], exactly as connection.go:88-98 sets
        # them: for an RSA key that is `ssh-rsa`, which to OpenSSH as to x/crypto means the SHA-1 signature alone.
        lines += [f"UserKnownHostsFile {known}", "StrictHostKeyChecking yes", f"HostKeyAlgorithms {kind}"]
    else:
        lines += ["UserKnownHostsFile /dev/null", "StrictHostKeyChecking no"]  # ssh.InsecureIgnoreHostKey
    if hop.get("privateKey"):
        lines.append(f"IdentityFile {_private_key(directory, alias, hop['privateKey'], hop.get('privateKeyPassword'))}")
    else:
        lines.append(f"IdentityFile {directory}/{alias}.no-key")  # keeps OpenSSH off ~/.ssh/id_*
    agent = _agent(hop)
    if agent:
        lines += [f'IdentityAgent "{agent}"', "IdentitiesOnly no"]
    else:
        lines += ["IdentityAgent none", "IdentitiesOnly yes"]
    if hop.get("password"):
        env.update(SSH_ASKPASS=_askpass(directory, alias, hop["password"]), SSH_ASKPASS_REQUIRE="force")
        lines += ["BatchMode no", "PasswordAuthentication yes", "KbdInteractiveAuthentication yes",
                  "NumberOfPasswordPrompts 1"]
    else:
        lines += ["BatchMode yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no"]
    if proxy_command:
        lines.append(f"ProxyCommand {proxy_command}")
    return "\n  ".join(lines) + "\n", env
