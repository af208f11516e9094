"""Nodes, pools and the SSH connection that reaches them."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Optional

from pydantic import Field, StringConstraints, ValidationInfo, field_validator

from components.config.base import DNS_LABEL, DNS_SUBDOMAIN, LOGIN_NAME, SpecModel
from components.config.npu_network import NetworkDefaults, NodeNetwork, NpuPort
from components.config.redact import preview

HOST_KEY = re.compile(r"^(ssh-ed25519|ssh-rsa|rsa-sha2-256|rsa-sha2-512|ecdsa-sha2-nistp(256|384|521)) "
                      r"[A-Za-z0-9+/]+={0,3}$")
ZONE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
# Length-prefixed fields of each key type's blob (RFC 4253, RFC 5656, RFC 8709): type, then the key itself.
KEY_FIELDS = {"ssh-ed25519": 2, "ssh-rsa": 3, "ecdsa-sha2-nistp256": 3, "ecdsa-sha2-nistp384": 3,
              "ecdsa-sha2-nistp521": 3}
HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$")


class Chip(str, Enum):
    """Ascend chip families, as `npu-smi` and the device plugin know them."""

    A910 = "910"
    A910B = "910B"
    A910C = "910C"  # Atlas A3: two chips per NPU, advertised and counted by chip
    A310 = "310"
    A310P = "310P"


class Arch(str, Enum):
    """CPU architectures the Ascend packages are built for."""

    AARCH64 = "aarch64"
    X86_64 = "x86_64"


class ContainerRuntime(str, Enum):
    """The container engine the kubelet talks to on a node."""

    CONTAINERD = "containerd"
    DOCKER = "docker"


def host_key(value: Optional[str]) -> Optional[str]:
    """Accept `ssh-keyscan` lines (`host type key`) and keep `type key`, once the key blob proves whole; an RSA key
    labelled by a signature algorithm (`rsa-sha2-512`) is kept as the key type its blob names, `ssh-rsa`, as
    known_hosts writes it (OpenSSH negotiates rsa-sha2-512 or -256 with it all the same)."""
    if value is None:
        return None
    parts = value.split()
    if len(parts) == 3 and not HOST_KEY.match(" ".join(parts[:2])):
        parts = parts[1:]
    if len(parts) >= 2 and HOST_KEY.match(" ".join(parts[:2])):
        problem = blob_problem(parts[0], parts[1])
        if problem:
            raise ValueError(f"{problem}; copy the whole line `ssh-keyscan -t ed25519 <address>` prints")
        return f"{'ssh-rsa' if parts[0].startswith('rsa-sha2-') else parts[0]} {parts[1]}"
    raise ValueError("not an SSH public host key; write the line `ssh-keyscan -t ed25519 <address>` "
                     "prints, for example 'ssh-ed25519 AAAAC3Nza...'")


def scanned_for(value: str, where: Optional[str], field: str) -> None:
    """An `ssh-keyscan` line names the host it was scanned from: it must be WHERE, the address FIELD gives (known_hosts
    format, OpenSSH's hostfile.c and ssh-keyscan.c: `host`, `[host]:port`, comma-separated names, or HASH_MAGIC
    `|1|salt|hmac` (host_hash: HMAC-SHA1 of the host) under -H)."""
    parts = value.split()
    if where is None or len(parts) != 3 or HOST_KEY.match(" ".join(parts[:2])):
        return
    scanned = parts[0]
    if scanned.startswith("|1|"):
        salt, _, digest = scanned[3:].partition("|")
        try:
            mac = hmac.new(base64.b64decode(salt), where.encode(), hashlib.sha1).digest()
            matches = hmac.compare_digest(mac, base64.b64decode(digest))
        except (binascii.Error, ValueError):
            matches = False
        if not matches:
            raise ValueError(f"the line's hashed host is not {field} {where} (or was scanned on a port other than "
                             f"22); paste the unhashed line of `ssh-keyscan -t ed25519 {where}`")
        return
    names = []
    for name in scanned.split(","):
        name = name[1:].split("]:", 1)[0] if name.startswith("[") else name
        try:
            names.append(address(name))
        except ValueError:
            names.append(name.lower())
    if where not in names:
        raise ValueError(f"the line is ssh-keyscan's for {preview(scanned)}, not for {field} {where}: pin this "
                         f"host's own key (`ssh-keyscan -t ed25519 {where}`)")


def blob_problem(label: str, blob: str) -> Optional[str]:
    """What is wrong with a host key's base64 blob: not base64, cut short, or of another type than its label."""
    try:
        data = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return "the key is not whole base64 (cut short or mistyped)"
    fields, offset = [], 0
    while offset < len(data):
        if offset + 4 > len(data):
            return "the key is cut short"
        size = int.from_bytes(data[offset:offset + 4], "big")
        if offset + 4 + size > len(data):
            return "the key is cut short"
        fields.append(data[offset + 4:offset + 4 + size])
        offset += 4 + size
    inner = fields[0].decode("ascii", "replace")[:40] if fields else ""
    expected = "ssh-rsa" if label.startswith("rsa-sha2-") else label
    if inner != expected:
        return f"the label says {label} but the key inside is {inner or 'empty'}"
    if len(fields) != KEY_FIELDS[expected] or (expected == "ssh-ed25519" and len(fields[1]) != 32):
        return "the key is cut short or has extra data"
    return None


def address(value: str) -> str:
    """An IP address (IPv4-mapped IPv6 read as IPv4, a zone id only as an interface name) or a DNS name."""
    if "@" in value:
        raise ValueError("carries a user name or password ('user@host'); write only the address: the user goes in "
                         "ssh.user or ssh.bastion.user, and logins use the sshPrivateKey secret or the agent")
    host, percent, zone = value.partition("%")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None and percent:
        if ip.version != 6 or ZONE_ID.match(zone) is None:
            raise ValueError(f"{preview(value)} has a zone id that is not an interface name; after '%' write the "
                             "interface (letters, digits, '_', '.', '-', at most 15 characters), e.g. fe80::1%eth0")
        return f"{ip}%{zone}"
    if ip is not None:
        mapped = getattr(ip, "ipv4_mapped", None)
        return str(mapped or ip)
    if not percent and HOSTNAME.match(value) and len(value) <= 253:
        return value.lower()
    raise ValueError(f"{preview(value)} is not an IP address or host name; write for example '10.0.0.11'")


class Bastion(SpecModel):
    """A jump host every node connection goes through."""

    host: str = Field(description="Address of the bastion.")
    port: int = Field(22, ge=1, le=65535, description="SSH port of the bastion.")
    user: Optional[str] = Field(None, pattern=LOGIN_NAME, description="User on the bastion; defaults to `ssh.user`.")
    host_key: str = Field(description="Pinned public host key of the bastion (ed25519, ecdsa or RSA): "
                                      "`ssh-keyscan -t ed25519 -p <port> <host>`.")

    _host = field_validator("host")(classmethod(lambda cls, v: address(v)))

    @field_validator("host_key")
    @classmethod
    def _key(cls, value: str, info: ValidationInfo) -> Optional[str]:
        scanned_for(value, info.data.get("host"), "the bastion's host")
        return host_key(value)


class Ssh(SpecModel):
    """How the program logs in to the nodes; the private key itself lives in `sshPrivateKey`."""

    user: str = Field("root", pattern=LOGIN_NAME,
                      description="Login user; the installers need root, so a non-root user must have sudo.")
    port: int = Field(22, ge=1, le=65535, description="SSH port on the nodes.")
    use_agent: bool = Field(False, description="Authenticate with the SSH agent (`SSH_AUTH_SOCK`) instead of "
                                               "the `sshPrivateKey` secret.")
    bastion: Optional[Bastion] = Field(None, description="Optional jump host.")


# Chips MindCluster v26.1.0 serves that this release does not carry yet, each refused with what is missing rather
# than half supported (their facts: docs/releases.md, "Products not carried yet").
NOT_CARRIED = {
    ("950", "ascend950", "950pr", "950dt", "ascend950pr", "ascend950dt", "a5"):
        "Ascend 950 (Atlas 950 SuperPoD, 850, 350) is not carried by this release: MindCluster v26.1.0 serves it as "
        "huawei.com/npu with Unified Bus devices (/dev/uburma, /dev/ummu) on HDK 25.1.RC1 and openEuler 24.03 SP4, "
        "none of which this release's catalog, host steps or checks know",
}
# Other names of a chip this release carries, as Huawei's tools write them: the value to write instead.
ALIASES = {"a3": "910C", "910_93": "910C", "ascend910a3": "910C", "910c": "910C"}


def carried_chip(value: object) -> object:
    """A chip this release carries passes on to the enum; one it knows of but does not carry is refused, saying why."""
    for names, why in NOT_CARRIED.items():
        if isinstance(value, (str, int)) and str(value).strip().lower() in names:
            raise ValueError(f"{why}. Write 910, 910B, 910C, 310 or 310P (Atlas 800I A2 and 300I A2 servers are 910B)")
    if isinstance(value, str) and value.strip().lower() in ALIASES and value.strip() != ALIASES[value.strip().lower()]:
        raise ValueError(f"{value.strip()!r} is Atlas A3's chip (Ascend 910C); write {ALIASES[value.strip().lower()]}")
    return value


class Pool(SpecModel):
    """Defaults shared by the nodes that name this pool."""

    chip: Optional[Chip] = Field(None, description="Chip type: `910`, `910B`, `910C` (Atlas A3), `310` or `310P`.")
    arch: Optional[Arch] = Field(None, description="CPU architecture: `aarch64` or `x86_64`.")
    npu_count: Optional[int] = Field(None, ge=1, le=64, description="NPUs each node must show in `npu-smi info`; "
                                                                    "on 910C (Atlas A3) its chips, two per NPU.")
    container_runtime: Optional[ContainerRuntime] = Field(None, description="`containerd` or `docker`.")
    npu_network: Optional[NetworkDefaults] = Field(
        None, description="NPU network (RoCE) settings the pool's nodes share: netmask, gateway, detectAddress.")

    _chip = field_validator("chip", mode="before")(classmethod(lambda cls, v: carried_chip(v)))


class Node(SpecModel):
    """One server; `name` is its Kubernetes node name."""

    name: str = Field(pattern=DNS_SUBDOMAIN, max_length=253, description="Kubernetes node name.")
    address: str = Field(description="IP address or DNS name SSH connects to.")
    host_key: str = Field(description="Pinned public host key (ed25519, ecdsa or RSA): "
                                      "`ssh-keyscan -t ed25519 -p <ssh.port> <address>`.")
    pool: Optional[str] = Field(None, pattern=DNS_LABEL, description="Pool whose defaults this node takes.")
    wave: Optional[int] = Field(None, ge=1, description="Rollout wave (1, 2, ...); canaries always go first.")
    chip: Optional[Chip] = Field(None, description="Chip type; overrides the pool.")
    arch: Optional[Arch] = Field(None, description="CPU architecture; overrides the pool.")
    npu_count: Optional[int] = Field(None, ge=1, le=64,
                                     description="Expected NPU count (910C: chips); overrides the pool.")
    container_runtime: Optional[ContainerRuntime] = Field(
        None, description="Container engine; overrides the pool and `cluster.containerRuntime`.")
    npu_network: Optional[NodeNetwork] = Field(
        None, description="The NPUs' own network (RoCE, for multi-node training): `addresses` (one per NPU id), "
                          "and netmask, gateway, detectAddress unless the pool gives them. Optional.")
    previous_names: list[Annotated[str, StringConstraints(pattern=DNS_SUBDOMAIN, max_length=253)]] = Field(
        default_factory=list, description="Names this server had in the stack before `name` changed: its host "
                                          "steps keep their state (nothing is uninstalled or installed again).")

    _address = field_validator("address")(classmethod(lambda cls, v: address(v)))
    _chip = field_validator("chip", mode="before")(classmethod(lambda cls, v: carried_chip(v)))

    @field_validator("host_key")
    @classmethod
    def _key(cls, value: str, info: ValidationInfo) -> Optional[str]:
        scanned_for(value, info.data.get("address"), "this node's address")
        return host_key(value)


@dataclass(frozen=True)
class NodeSpec:
    """A node with its pool's defaults applied: everything the layers need, nothing optional."""

    name: str
    address: str
    host_key: str
    pool: Optional[str]
    wave: Optional[int]
    chip: Chip
    arch: Arch
    npu_count: int
    container_runtime: ContainerRuntime
    previous_names: tuple[str, ...] = ()
    npu_network: tuple[NpuPort, ...] = ()
