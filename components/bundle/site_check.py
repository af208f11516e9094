"""`make bundle CHECK=site`: do the stack's own registry and package mirror (or upload directory) hold the bundle?"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional
from urllib.parse import quote

from components.bundle.check import package_problems
from components.bundle.oci_archive import streamed_sha256
from components.config.packages import Packages, Source

SITE = "site"
LOGIN_VARIABLE = "ASCEND_NPU_MIRROR_LOGIN"
IMAGE_TIMEOUT = 60  # seconds skopeo may take for one image
MIRROR_TIMEOUT = 60  # seconds the mirror may stay silent, per connection and per read
PARALLEL = 4  # images inspected at once
SKOPEO_MESSAGE = re.compile(r'level=\w+ msg="(?P<msg>(?:[^"\\]|\\.)*)"')
PARSE_PREFIX = re.compile(r'^Error parsing image name "[^"]*": ')
CHART_LINE = ("  chart    not checked in site mode: neither the registry nor the mirror serves it "
              "(make bundle STACK={stack} CHECK=<dir> checks the packaged chart)")


class SiteCheckError(Exception):
    """The site check cannot run here (no skopeo, a malformed login variable); nothing was checked."""


def skopeo_said(stderr: str) -> str:
    """Skopeo's last stderr line, its log message unquoted and without the misleading `Error parsing image name`."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if not lines:
        return "no message"
    match = SKOPEO_MESSAGE.search(lines[-1])
    said = match.group("msg").replace('\\"', '"').replace("\\\\", "\\") if match else lines[-1].strip()
    return PARSE_PREFIX.sub("", said)


def inspect_image(skopeo: str, image: dict) -> tuple[Optional[str], Optional[str]]:
    """(problem, note) for one image: its target's raw manifest hashes to the pinned digest, or its tag exists."""
    target = image["target"]
    try:
        done = subprocess.run([skopeo, "inspect", "--raw", f"docker://{target}"], capture_output=True,
                              timeout=IMAGE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"image {target}: skopeo gave no answer within {IMAGE_TIMEOUT} s", None
    if done.returncode != 0:
        said = skopeo_said(done.stderr.decode(errors="replace"))
        return f"image {target}: not found or not readable; skopeo: {said}", None
    found = f"sha256:{hashlib.sha256(done.stdout).hexdigest()}"
    if image["digest"] is None:
        note = f"the tag exists (held as {found}); a tag-only image cannot be proven the same image as its source"
        return None, f"  image    {target}: {note}"
    if found != image["digest"]:
        return f"image {target}: the registry holds {found} under this reference, the stack pins {image['digest']}", \
            None
    return None, None


def image_problems(images: list[dict]) -> tuple[list[str], list[str]]:
    """(problems, notes) of every image, at most PARALLEL inspected at once, in listing order; needs skopeo."""
    skopeo = shutil.which("skopeo")
    if skopeo is None:
        raise SiteCheckError("skopeo not found: the site check reads each image's manifest from the registry with it; "
                             "install it (Debian package `skopeo`) and, when the registry asks for a login, run "
                             "`skopeo login <registry>`")
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = list(pool.map(lambda image: inspect_image(skopeo, image), images))
    return [p for p, _ in results if p], [n for _, n in results if n]


def mirror_login() -> Optional[str]:
    """The mirror's `user:password` from ASCEND_NPU_MIRROR_LOGIN, or None; its value is never shown."""
    login = os.environ.get(LOGIN_VARIABLE)
    if not login:
        return None
    if ":" not in login:
        raise SiteCheckError(f"{LOGIN_VARIABLE} is set but not user:password (its value is not shown)")
    return login


def fetched_sha256(url: str, login: Optional[str]) -> str:
    """The SHA-256 of URL's body, hashed as it streams; urllib.error.URLError or OSError when it cannot be read."""
    request = urllib.request.Request(url)
    if login is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(login.encode()).decode())
    with urllib.request.urlopen(request, timeout=MIRROR_TIMEOUT) as response:  # noqa: S310 - http(s) by the config
        return streamed_sha256(response)[0]


def http_problem(error: urllib.error.HTTPError, login: Optional[str]) -> str:
    """What an HTTP error status means here, the login never in it."""
    said = f"HTTP {error.code} {error.reason}"
    if error.code in (401, 403):
        return said + (f": the mirror refused the login in {LOGIN_VARIABLE}" if login else
                       f": the mirror asks for a login; set {LOGIN_VARIABLE}=user:password (the stack's "
                       "mirrorCredentials)")
    return said


def mirror_problems(base: str, packages: list[dict], login: Optional[str]) -> list[str]:
    """Each package the mirror does not serve at `<base>/<file>`, or serves with another sha256."""
    problems = []
    for pkg in packages:
        url = f"{base.rstrip('/')}/{quote(pkg['file'])}"
        try:
            found = fetched_sha256(url, login)
        except urllib.error.HTTPError as exc:
            problems.append(f"package {pkg['file']}: {url}: {http_problem(exc, login)}")
            continue
        except (urllib.error.URLError, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            problems.append(f"package {pkg['file']}: {url}: not reachable ({reason})")
            continue
        if found != pkg["sha256"]:
            problems.append(f"package {pkg['file']}: {url}: sha256 {found}, the stack pins {pkg['sha256']}")
    return problems


def package_check(root: Path, source: Packages, packages: list[dict]) -> tuple[str, list[str]]:
    """(where the packages were checked, problems): the mirror over HTTP, or the upload directory by sha256."""
    if source.source is Source.MIRROR and source.mirror_url:
        return f"at {source.mirror_url}", mirror_problems(source.mirror_url, packages, mirror_login())
    directory = source.directory or ""
    problems = package_problems(root, packages, under=directory.rstrip("/"))
    return f"in {directory} (packages.directory)", [f"package {p}" for p in problems]


def site_report(manifest: dict, source: Packages, root: Path) -> tuple[list[str], list[str]]:
    """(lines for stdout, problems): every listed image in the stack's registry and every package at its source."""
    images, packages = manifest["images"], manifest["packages"]
    problems, notes = image_problems(images)
    where, package_lines = package_check(root, source, packages)
    problems += package_lines
    registry = f"in {manifest['registry']}" if manifest["registry"] else \
        "in the registries they name (no images.registry)"
    head = (f"site of stack {manifest['stack']}: {len(images)} images {registry}, each manifest's sha256 against its "
            f"pinned digest; {len(packages)} packages {where}, by sha256")
    return [head, *notes, CHART_LINE.format(stack=manifest["stack"])], problems
