"""The Ascend `.run` installers a stack deploys, and the file-name rules they follow."""
from __future__ import annotations

import posixpath
import re
from enum import Enum
from typing import Optional
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, field_validator

from components.config.base import PACKAGE_FILE, SpecModel
from components.config.hosts import Arch, Chip
from components.config.redact import SECRET_WORDS, preview


class Kind(str, Enum):
    """Installer kinds, in the order a fresh host needs them."""

    DRIVER = "driver"
    FIRMWARE = "firmware"
    TOOLKIT = "toolkit"
    KERNELS = "kernels"
    DOCKER_RUNTIME = "dockerRuntime"


class Source(str, Enum):
    """Where hosts get the packages from."""

    UPLOAD = "upload"
    MIRROR = "mirror"


# Directories an upload must never be: the whole filesystem or a system tree would be copied to every node.
SYSTEM_DIRECTORIES_TOP = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media",
                                    "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"})
SYSTEM_DIRECTORIES = frozenset({"/", "//", "/usr/local", "/usr/lib", "/var/lib", "/var/tmp", "/var/cache"})
CHIP_TOKEN = {Chip.A910: "910", Chip.A910B: "910b", Chip.A910C: "a3", Chip.A310: "310", Chip.A310P: "310p"}
VERSION_KEY = {Kind.DRIVER: "driver", Kind.FIRMWARE: "firmware", Kind.TOOLKIT: "cann",
               Kind.KERNELS: "cann", Kind.DOCKER_RUNTIME: "dockerRuntime"}
NEEDS_CHIP = {Kind.DRIVER, Kind.FIRMWARE, Kind.KERNELS}
NEEDS_ARCH = {Kind.DRIVER, Kind.TOOLKIT, Kind.KERNELS, Kind.DOCKER_RUNTIME}

_CHIP = r"(?P<chip>910b|910|310p|310)"
_V = r"(?P<version>[0-9][0-9A-Za-z.]*)"
_ARCH = r"(?P<arch>aarch64|x86_64)"
# Atlas A3 packages name the product, not the chip: Atlas-A3-hdk-npu-driver_25.3.rc1_linux-aarch64.run (Huawei's HDK
# 25.3.RC1 download, github.com/hicann/pypto tools/prepare_env.sh L72-83), Atlas-A3-cann-kernels_<v>_... before CANN
# 8.5.0 and Ascend-cann-A3-ops_<v>_... from it (github.com/Ascend/cann-container-image c5a67b3a, cann/*-a3-*).
NAME_RULES = {
    Kind.DRIVER: [rf"Ascend-hdk-{_CHIP}-npu-driver_{_V}_linux-(?P<arch>aarch64|x86-64)\.run",
                  rf"(?P<chip>Atlas-A3)-hdk-npu-driver_{_V}_linux-(?P<arch>aarch64|x86-64)\.run"],
    Kind.FIRMWARE: [rf"Ascend-hdk-{_CHIP}-npu-firmware_{_V}\.run", rf"(?P<chip>Atlas-A3)-hdk-npu-firmware_{_V}\.run"],
    Kind.TOOLKIT: [rf"Ascend-cann-toolkit_{_V}_linux-{_ARCH}\.run"],
    Kind.KERNELS: [rf"Ascend-cann-kernels-{_CHIP}_{_V}_linux(-{_ARCH})?\.run",
                   rf"Ascend-cann-{_CHIP}-ops_{_V}_linux-{_ARCH}\.run",
                   rf"(?P<chip>Atlas-A3)-cann-kernels_{_V}_linux-{_ARCH}\.run",
                   rf"Ascend-cann-(?P<chip>A3)-ops_{_V}_linux-{_ARCH}\.run"],
    Kind.DOCKER_RUNTIME: [rf"Ascend-docker-runtime_{_V}_linux-{_ARCH}\.run"],
}


class PackageFile(SpecModel):
    """One installer: kind, the chip and arch it is for, file name and checksum."""

    kind: Kind = Field(description="`driver`, `firmware`, `toolkit`, `kernels` or `dockerRuntime`.")
    file: str = Field(pattern=PACKAGE_FILE, description="File name of the `.run` package.")
    sha256: str = Field(description="SHA-256 of the file, 64 hex characters (`sha256sum FILE`).")
    chip: Optional[Chip] = Field(None, description="Chip it is for (driver, firmware, kernels).")
    arch: Optional[Arch] = Field(None, description="Architecture it is for (driver, toolkit, kernels, "
                                                   "dockerRuntime).")

    @field_validator("sha256")
    @classmethod
    def _sha256(cls, value: str) -> str:
        if re.fullmatch(r"[0-9A-Fa-f]{64}", value) is None:
            raise ValueError(f"{preview(value)} is not a SHA-256; write the 64 hex "
                             "characters `sha256sum FILE` prints")
        return value.lower()


class Packages(SpecModel):
    """Where the installers come from and which files they are."""

    source: Source = Field(description="`upload` from `directory`, or `mirror` from `mirrorUrl`.")
    directory: Optional[str] = Field(None, description="Local directory holding the files (source `upload`).")
    mirror_url: Optional[str] = Field(None, description="Internal HTTP(S) URL the nodes fetch `<url>/<file>` from "
                                                        "(source `mirror`); a login goes in the `mirrorCredentials` "
                                                        "secret, never in the URL.")
    files: list[PackageFile] = Field(min_length=1, description="The installers, one entry per file.")

    _directory = field_validator("directory")(classmethod(lambda cls, v: upload_directory(v)))
    _mirror = field_validator("mirror_url")(classmethod(lambda cls, v: mirror_url(v)))


def upload_directory(value: Optional[str]) -> Optional[str]:
    """A directory of its own: never a system root, the home directory or the project itself."""
    if value is None:
        return None
    if any(c in value for c in "\0\n\r"):
        raise ValueError("a directory name with a line break or NUL; write the path of the packages directory")
    normal = posixpath.normpath(value.strip())
    if normal in SYSTEM_DIRECTORIES or normal in (".", "..", "~") \
            or normal.count("/") == 1 and normal.startswith("/") and normal[1:] in SYSTEM_DIRECTORIES_TOP:
        raise ValueError(f"{preview(value)} would upload a whole system or project directory to every node; write "
                         "a directory that holds only the .run files, e.g. ascend-packages")
    return value


def mirror_url(value: Optional[str]) -> Optional[str]:
    """An http(s) URL with a host and no credentials in it (those go in the `mirrorCredentials` secret)."""
    if value is None:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - reading it raises ValueError for a port out of range
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", value):
        raise ValueError(f"{preview(value)} is not an http:// or https:// URL; write e.g. "
                         "https://mirror.example.com/ascend")
    secret_query = [k for k, _ in parse_qsl(parts.query, keep_blank_values=True) if SECRET_WORDS.search(k)]
    if parts.username is not None or parts.password is not None or secret_query:
        raise ValueError("the URL carries credentials (a user/password or a token), which would sit in plain text "
                         "in the stack and in every node's install command; write the URL without them and run "
                         "`pulumi config set --secret mirrorCredentials 'user:password'` (sent to the node on stdin)")
    return value


def parse_file_name(kind: Kind, file: str) -> Optional[dict]:
    """The chip token, version and arch a file name states, or None when it does not follow the rules."""
    for rule in NAME_RULES[kind]:
        match = re.fullmatch(rule, file)
        if match:
            found = match.groupdict()
            if found.get("chip"):  # one token per chip: Atlas-A3 and A3 are both a3
                found["chip"] = found["chip"].lower().removeprefix("atlas-")
            if found.get("arch"):
                found["arch"] = found["arch"].replace("x86-64", "x86_64")
            return found
    return None


def declared_version(versions, kind: Kind) -> str:
    """The stack's version for a package kind (`versions.<key>`)."""
    return getattr(versions, "docker_runtime" if kind is Kind.DOCKER_RUNTIME else VERSION_KEY[kind])


def versions_match(declared: str, in_file: str) -> bool:
    """Equal ignoring case, or the file adds one numeric patch (driver `25.0.rc1` in `25.0.rc1.1`)."""
    declared, in_file = declared.lower(), in_file.lower()
    return in_file == declared or re.fullmatch(re.escape(declared) + r"\.[0-9]+", in_file) is not None


def expected_file_name(kind: Kind, version: str, chip: Optional[Chip], arch: Optional[Arch]) -> str:
    """The name Huawei gives the file for this kind, version, chip and arch (for messages)."""
    token = CHIP_TOKEN[chip] if chip else "<chip>"
    a = arch.value if arch else "<arch>"
    ops = re.match(r"^([0-9]+)\.([0-9]+)", version)
    from_85 = ops is not None and (int(ops[1]), int(ops[2])) >= (8, 5)  # the operator package is `-ops` from 8.5.0
    if chip is Chip.A910C:
        return {
            Kind.DRIVER: f"Atlas-A3-hdk-npu-driver_{version}_linux-{a.replace('x86_64', 'x86-64')}.run",
            Kind.FIRMWARE: f"Atlas-A3-hdk-npu-firmware_{version}.run",
            Kind.KERNELS: (f"Ascend-cann-A3-ops_{version}_linux-{a}.run" if from_85
                           else f"Atlas-A3-cann-kernels_{version}_linux-{a}.run"),
        }[kind]
    return {
        Kind.DRIVER: f"Ascend-hdk-{token}-npu-driver_{version}_linux-{a.replace('x86_64', 'x86-64')}.run",
        Kind.FIRMWARE: f"Ascend-hdk-{token}-npu-firmware_{version}.run",
        Kind.TOOLKIT: f"Ascend-cann-toolkit_{version}_linux-{a}.run",
        Kind.KERNELS: (f"Ascend-cann-{token}-ops_{version}_linux-{a}.run" if from_85
                       else f"Ascend-cann-kernels-{token}_{version}_linux-{a}.run"),
        Kind.DOCKER_RUNTIME: f"Ascend-docker-runtime_{version}_linux-{a}.run",
    }[kind]
