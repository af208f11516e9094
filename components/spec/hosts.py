"""Nodes, pools and the SSH connection that reaches them."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from enum import Enum
from typing import Optional

from pydantic import Field, field_validator

from components.spec.base import DNS_LABEL, DNS_SUBDOMAIN, SpecModel

HOST_KEY = re.compile(r"^(ssh-ed25519|ssh-rsa|rsa-sha2-256|rsa-sha2-512|ecdsa-sha2-nistp(256|384|521)) "
                      r"[A-Za-z0-9+/]+={0,3}$")
HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$")


class Chip(str, Enum):
    """Ascend chip families, as `npu-smi` and the device plugin know them."""

    A910 = "910"
    A910B = "910B"
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
    """Accept `ssh-keyscan` lines (`host type key`) and keep `type key`."""
    if value is None:
        return None
    parts = value.split()
    if len(parts) == 3 and not HOST_KEY.match(" ".join(parts[:2])):
        parts = parts[1:]
    if len(parts) >= 2 and HOST_KEY.match(" ".join(parts[:2])):
        return " ".join(parts[:2])
    raise ValueError("not an SSH public host key; write the line `ssh-keyscan -t ed25519 <address>` "
                     "prints, for example 'ssh-ed25519 AAAAC3Nza...'")


def address(value: str) -> str:
    """An IP address or a DNS name."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        if HOSTNAME.match(value) and len(value) <= 253:
            return value.lower()
    raise ValueError(f"'{value}' is not an IP address or host name; write for example '10.0.0.11'")


class Bastion(SpecModel):
    """A jump host every node connection goes through."""

    host: str = Field(description="Address of the bastion.")
    port: int = Field(22, ge=1, le=65535, description="SSH port of the bastion.")
    user: Optional[str] = Field(None, description="User on the bastion; defaults to `ssh.user`.")
    host_key: str = Field(description="Pinned public host key of the bastion (`ssh-keyscan` output).")

    _host = field_validator("host")(classmethod(lambda cls, v: address(v)))
    _key = field_validator("host_key")(classmethod(lambda cls, v: host_key(v)))


class Ssh(SpecModel):
    """How the program logs in to the nodes; the private key itself lives in `sshPrivateKey`."""

    user: str = Field("root", pattern=r"^[a-z_][a-z0-9_-]*$",
                      description="Login user; the installers need root, so a non-root user must have sudo.")
    port: int = Field(22, ge=1, le=65535, description="SSH port on the nodes.")
    use_agent: bool = Field(False, description="Authenticate with the SSH agent (`SSH_AUTH_SOCK`) instead of "
                                               "the `sshPrivateKey` secret.")
    bastion: Optional[Bastion] = Field(None, description="Optional jump host.")


class Pool(SpecModel):
    """Defaults shared by the nodes that name this pool."""

    chip: Optional[Chip] = Field(None, description="Chip type: `910`, `910B`, `310` or `310P`.")
    arch: Optional[Arch] = Field(None, description="CPU architecture: `aarch64` or `x86_64`.")
    npu_count: Optional[int] = Field(None, ge=1, le=64, description="NPUs each node must show in `npu-smi info`.")
    container_runtime: Optional[ContainerRuntime] = Field(None, description="`containerd` or `docker`.")


class Node(SpecModel):
    """One server; `name` is its Kubernetes node name."""

    name: str = Field(pattern=DNS_SUBDOMAIN, max_length=253, description="Kubernetes node name.")
    address: str = Field(description="IP address or DNS name SSH connects to.")
    host_key: str = Field(description="Pinned public host key (`ssh-keyscan -t ed25519 <address>`).")
    pool: Optional[str] = Field(None, pattern=DNS_LABEL, description="Pool whose defaults this node takes.")
    wave: Optional[int] = Field(None, ge=1, description="Rollout wave (1, 2, ...); canaries always go first.")
    chip: Optional[Chip] = Field(None, description="Chip type; overrides the pool.")
    arch: Optional[Arch] = Field(None, description="CPU architecture; overrides the pool.")
    npu_count: Optional[int] = Field(None, ge=1, le=64, description="Expected NPU count; overrides the pool.")
    container_runtime: Optional[ContainerRuntime] = Field(
        None, description="Container engine; overrides the pool and `cluster.containerRuntime`.")

    _address = field_validator("address")(classmethod(lambda cls, v: address(v)))
    _key = field_validator("host_key")(classmethod(lambda cls, v: host_key(v)))


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
