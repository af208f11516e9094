"""The strict base model every stack-config section inherits from."""
from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from components.config.redact import preview

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
