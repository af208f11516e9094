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
HOST = (r"(localhost|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)(:[0-9]{1,5})?"
        r"|[a-z0-9]([a-z0-9-]*[a-z0-9])?:[0-9]{1,5}")
# A path component of a repository (distribution/reference regexp.go, pathComponent): a Harbor, Artifactory, Nexus
# or Quay project the site keeps its mirrors under.
PATH_COMPONENT = r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*"
REGISTRY = re.compile(rf"^({HOST})(/{PATH_COMPONENT})*$")
HOST_ONLY = re.compile(rf"^({HOST})$")
COMPONENT = re.compile(rf"^{PATH_COMPONENT}$")
REGISTRY_PART = re.compile(r"^(localhost|[^/]*[.:][^/]*)/")
EXAMPLE, PROJECT_EXAMPLE = "registry.site.example:5000", "harbor.site.example/ascend"
CREDENTIALS_KEY, CREATED_SECRET = "registryCredentials", "ascend-npu-registry"
SET_CREDENTIALS = f"`pulumi config set --secret {CREDENTIALS_KEY} 'user:password'`"


def shown(value: str) -> str:
    """VALUE quoted when it is short and no secret, else its preview."""
    return f"'{value}'" if len(value) <= 80 and not looks_secret(value) else preview(value)


def registry_problem(value: str) -> Optional[str]:
    """What to write instead of a registry that is not host[:port][/project...], or None."""
    form = f"host[:port], or host[:port]/project, e.g. {EXAMPLE} or {PROJECT_EXAMPLE}"
    if "@" in value or looks_secret(value):
        return f"{preview(value)} holds a login; write the {form}, and the login with {SET_CREDENTIALS}"
    scheme, sep, rest = value.partition("://")
    if sep:
        return (f"{shown(value)} has a scheme ({scheme}://); write {rest.rstrip('/') or EXAMPLE} (images are always "
                "pulled over HTTPS, or as the container engine is configured for that host)")
    if value.endswith("/"):
        return f"{shown(value)} ends with '/'; write {value.rstrip('/') or EXAMPLE}"
    if value != value.lower():
        return (f"{shown(value)} has upper case (an image path may hold none: distribution/reference regexp.go); "
                f"write {value.lower()}")
    host, slash, path = value.partition("/")
    segments = path.split("/") if slash else []
    if "" in segments:
        return f"{shown(value)} has an empty path segment ('//'); write {'/'.join([host, *filter(None, segments)])}"
    bad = [segment for segment in segments if COMPONENT.match(segment) is None]
    if bad:
        return (f"{shown(value)}: the path segment '{bad[0]}' is not one an image reference may hold (lowercase "
                "letters and digits, single '.' or '_', '__', or '-' runs between them)")
    port = host.rpartition(":")[2] if ":" in host else ""
    if HOST_ONLY.match(host) is None or (port.isdigit() and not 0 < int(port) < 65536):
        return (f"{shown(value)} does not start with a registry host[:port]; write a lowercase host name with a '.' "
                f"(or localhost, or a :port), e.g. {EXAMPLE}, then the project path if any")
    return None


def checked_registry(value: Optional[str]) -> Optional[str]:
    """VALUE when it is a host[:port][/project...]; ValueError saying what to write otherwise."""
    problem = registry_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


def rewritten(repository: str, registry: Optional[str]) -> str:
    """REPOSITORY under REGISTRY (host[:port] with any project path) in place of its own registry part (none: Docker
    Hub), path kept; as written when REGISTRY is None or the repository is already under it."""
    if not registry or repository.startswith(f"{registry}/"):
        return repository
    return f"{registry}/{REGISTRY_PART.sub('', repository, count=1)}"


class Images(SpecModel):
    """Where every image of the stack is pulled from, and with which login."""

    registry: Optional[str] = Field(
        None, description="Registry every image the stack deploys (device plugin, exporter, validation Jobs) is "
                          "pulled from: host[:port] (`registry.site.example:5000`), or with the project the site "
                          "mirrors under (`harbor.site.example/ascend`). It replaces each image's registry and keeps "
                          "its path, tag and digest (`swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter` is "
                          "pulled as `harbor.site.example/ascend/ascendhub/npu-exporter`, as `skopeo sync --dest` "
                          "and `crane copy` mirror it); a repository already written under it is kept. An image's "
                          "own `registry` wins over it.")
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
                                           f"write images.registry: <host[:port][/project]>, e.g. {EXAMPLE}")]
    return []
