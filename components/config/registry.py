"""The site registry every image is pulled from, and the pull secret every Pod of the stack names."""
from __future__ import annotations

import re
from typing import Any, Optional

from pydantic import Field, field_validator

from components.config.base import DNS_SUBDOMAIN, SpecModel
from components.config.problems import Problem
from components.config.redact import looks_secret, preview

# host[:port]: DNS names or IPv4 in lower case. The first part of a repository is its registry only when it holds a
# '.' or a ':' or is `localhost` (github.com/distribution/reference normalize.go, splitDockerDomain); any other host
# would be read as a Docker Hub namespace.
REGISTRY = re.compile(r"^(localhost|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)(:[0-9]{1,5})?$"
                      r"|^[a-z0-9]([a-z0-9-]*[a-z0-9])?:[0-9]{1,5}$")
REGISTRY_PART = re.compile(r"^(localhost|[^/]*[.:][^/]*)/")
EXAMPLE = "registry.site.example:5000"
CREDENTIALS_KEY, CREATED_SECRET = "registryCredentials", "ascend-npu-registry"
SET_CREDENTIALS = f"`pulumi config set --secret {CREDENTIALS_KEY} 'user:password'`"


def shown(value: str) -> str:
    """VALUE quoted when it is short and no secret, else its preview."""
    return f"'{value}'" if len(value) <= 80 and not looks_secret(value) else preview(value)


def registry_problem(value: str) -> Optional[str]:
    """What to write instead of a registry that is not host[:port], or None."""
    if "@" in value or looks_secret(value):
        return (f"{preview(value)} holds a login; write the host[:port] alone, e.g. {EXAMPLE}, and the login with "
                f"{SET_CREDENTIALS}")
    scheme, sep, rest = value.partition("://")
    if sep:
        return (f"{shown(value)} has a scheme ({scheme}://); write the host[:port] alone, e.g. "
                f"{rest.split('/')[0] or EXAMPLE} (images are always pulled over HTTPS, or as the container engine "
                "is configured for that host)")
    host, slash, path = value.partition("/")
    if slash:
        return (f"{shown(value)} has a path (/{path}); write the host[:port] alone, e.g. {host}: "
                "images.registry replaces the registry of each image and keeps its path")
    port = host.rpartition(":")[2] if ":" in host else ""
    if REGISTRY.match(value) is None or (port.isdigit() and not 0 < int(port) < 65536):
        return (f"{shown(value)} is not a registry host[:port]; write a lowercase host name with a '.' (or "
                f"localhost, or a :port), e.g. {EXAMPLE}")
    return None


def checked_registry(value: Optional[str]) -> Optional[str]:
    """VALUE when it is a host[:port]; ValueError saying what to write otherwise."""
    problem = registry_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


def rewritten(repository: str, registry: Optional[str]) -> str:
    """REPOSITORY with its registry part (none: Docker Hub) replaced by REGISTRY; as written when REGISTRY is None."""
    if not registry:
        return repository
    return f"{registry}/{REGISTRY_PART.sub('', repository, count=1)}"


class Images(SpecModel):
    """Where every image of the stack is pulled from, and with which login."""

    registry: Optional[str] = Field(
        None, description="Registry (host[:port], e.g. `registry.site.example:5000`) that replaces the registry of "
                          "every image the stack deploys (device plugin, exporter, validation Jobs), keeping "
                          "each image's path, tag and digest; an image's own `registry` wins over it.")
    pull_secret: Optional[str] = Field(
        None, pattern=DNS_SUBDOMAIN, max_length=253,
        description="Name of an existing `kubernetes.io/dockerconfigjson` Secret in `cluster.namespace` that every "
                    "Pod of the stack names in `imagePullSecrets`; instead, with `registryCredentials` set, the stack "
                    f"creates `{CREATED_SECRET}` there.")

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: Optional[str]) -> Optional[str]:
        return checked_registry(value)


def pull_secret_name(spec: Any) -> Optional[str]:
    """The Secret the Pods name: `images.pullSecret`, or the one the stack creates from `registryCredentials`."""
    login = getattr(spec, "registry_credentials", None)  # the chart's own values read "" here: no login
    return spec.images.pull_secret or (CREATED_SECRET if login is not None and login != "" else None)


def credentials_problem(text: Optional[str]) -> Optional[str]:
    """Why a registry login is not `user:password` (never showing it), or None; None for an unknown value."""
    if text is None:
        return None
    user, colon, password = text.partition(":")
    if not colon or not user or not password or re.search(r"\s", user) or "\n" in password:
        return (f"not of the form user:password (a user without spaces or ':', a ':', then the password); run "
                f"{SET_CREDENTIALS} again")
    return None


def check_registry_credentials(images: Optional[Images], has_login: bool, login_is_secret: bool,
                               login_text: Optional[str]) -> list[Problem]:
    """The registry login is a Pulumi secret of the form user:password, for `images.registry`, and alone."""
    if not has_login:
        return []
    if not login_is_secret:
        form = " and not of the form user:password" if credentials_problem(login_text) else ""
        return [Problem(CREDENTIALS_KEY, f"stored in plain text{form}; remove it (`pulumi config rm "
                                         f"{CREDENTIALS_KEY}`) and run {SET_CREDENTIALS}")]
    problem = credentials_problem(login_text)
    if problem:
        return [Problem(CREDENTIALS_KEY, problem)]
    if images is not None and images.pull_secret is not None:
        return [Problem("images.pullSecret", f"set with {CREDENTIALS_KEY}: the stack would create its own Secret "
                                             f"({CREATED_SECRET}) from the login; keep one: drop images.pullSecret, or "
                                             f"`pulumi config rm {CREDENTIALS_KEY}` to use the existing Secret")]
    if images is not None and images.registry is None:
        return [Problem("images.registry", f"not set, but {CREDENTIALS_KEY} is: the login is for the site registry; "
                                           f"write images.registry: <host[:port]>, e.g. {EXAMPLE}")]
    return []
