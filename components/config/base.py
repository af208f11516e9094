"""The strict base model every stack-config section inherits from, and the value rules sections share."""
from __future__ import annotations

import re
from typing import Optional

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from components.config.redact import preview, preview_key

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
MIRROR_URL = r"^https?://[^\s/]+(/[^\s]*)?$"
PACKAGE_FILE = r"^[A-Za-z0-9][A-Za-z0-9._-]*\.run$"
LOGIN_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$"
CPU = r"^[0-9]+(\.[0-9]+)?m?$"
MEMORY = r"^[0-9]+(Ki|Mi|Gi)?$"
PULL_POLICY = r"^(IfNotPresent|Always|Never)$"
# Each pattern said in words: a problem tells what to write, never the expression.
PATTERN_WORDS = {
    DNS_LABEL: "write lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 "
               "characters",
    DNS_SUBDOMAIN: "write lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with "
                   "a letter or digit",
    MIRROR_URL: "write an http:// or https:// URL",
    PACKAGE_FILE: "write the `.run` file name without a directory",
    LOGIN_NAME: "write a login name: letters, digits, '_', '.' and '-', starting with a letter or '_', at most 32 "
                "characters (e.g. ascend-deploy or svc.ascend-deploy)",
    CPU: "write whole or decimal cores, or millicores, e.g. 500m or 1",
    MEMORY: "write bytes or Ki/Mi/Gi, e.g. 500Mi or 2Gi",
    PULL_POLICY: "write IfNotPresent, Always or Never",
}
UNPINNED_WORDS = frozenset({"latest", "stable", "current", "master", "main", "*", "any"})


class SpecModel(BaseModel):
    """Camel-case keys as written in Pulumi config; unknown keys rejected; frozen after checks."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        str_strip_whitespace=True,
    )


def require_pinned(value: str, what: str, example: str) -> str:
    """Refuse `latest`-style words and ranges where an exact version is needed."""
    if value.lower() in UNPINNED_WORDS:
        raise ValueError(f"{preview(value)} moves over time; write the exact {what}, e.g. {example}")
    if re.search(r"[\s*^~<>=|]", value) or ".x" in value.lower():
        raise ValueError(f"{preview(value)} is a range; write one exact {what}, e.g. {example}")
    return value


LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def checked_labels(labels: dict[str, str]) -> dict[str, str]:
    """Each key and value a valid Kubernetes label."""
    for key, value in labels.items():
        problem = label_key_problem(key) or label_value_problem(value)
        if problem:
            raise ValueError(f"label {preview_key(key)}: {problem}")
    return labels


def label_key_problem(key: str) -> Optional[str]:
    """Kubernetes label key rules: optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or LABEL_PREFIX.match(prefix) is None):
        return "the part before '/' must be a DNS name such as app.kubernetes.io"
    if not name or LABEL_NAME.match(name) is None:
        return ("the key must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at "
                "most 63 characters (an optional prefix such as app.kubernetes.io/ before it)")
    return None


def label_value_problem(value: str) -> Optional[str]:
    """Kubernetes label value rules: empty, or up to 63 letters, digits, '-', '_', '.', alphanumeric at both ends."""
    if LABEL_NAME.match(value) is None:
        return (f"the value {preview(value)} is not a Kubernetes label value; write at most 63 letters, digits, "
                "'-', '_' and '.', starting and ending with a letter or digit")
    return None
