"""`make bundle CHECK=site` against a real registry (Debian's docker-registry) and mirror (http.server) on loopback."""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from tests.stacks import ROOT, patched, write_stack
from tests.test_bundle import SKOPEO, needs_skopeo, oci_archive, run_bundle
from tests.test_site_registry import with_site

REGISTRY = shutil.which("docker-registry")
needs_registry = pytest.mark.skipif(REGISTRY is None, reason="docker-registry not installed (Debian package "
                                                             "`docker-registry`)")
PLUGIN = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin"
LOGIN = "mirror-user:Pw-n0t-in-0utput"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def registry(tmp_path, monkeypatch) -> Iterator[str]:
    """A distribution registry on loopback over plain HTTP, which skopeo is told of in a registries.conf."""
    # Through CONTAINERS_REGISTRIES_CONF, and as ~/.config/containers/registries.conf for Debian 12's skopeo 1.9,
    # which reads no such variable.
    address = f"127.0.0.1:{free_port()}"
    config = tmp_path / "registry.yml"
    config.write_text(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n"
                      f"    rootdirectory: {tmp_path / 'registry-data'}\nhttp:\n  addr: {address}\n")
    conf = f'[[registry]]\nlocation = "{address}"\ninsecure = true\n'
    home = tmp_path / "home"
    (home / ".config" / "containers").mkdir(parents=True)
    (home / ".config" / "containers" / "registries.conf").write_text(conf)
    (tmp_path / "registries.conf").write_text(conf)
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(tmp_path / "registries.conf"))
    monkeypatch.setenv("HOME", str(home))
    daemon = subprocess.Popen([REGISTRY, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://{address}/v2/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield address
    finally:
        daemon.terminate()
        daemon.wait(10)


class MirrorHandler(SimpleHTTPRequestHandler):
    """Files of one directory; with `login`, only to requests that send it as HTTP Basic auth."""

    login: str | None = None

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        wanted = self.login and "Basic " + base64.b64encode(self.login.encode()).decode()
        if wanted and self.headers.get("Authorization") != wanted:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args) -> None:
        pass


def serve(directory: Path, login: str | None) -> tuple[ThreadingHTTPServer, str]:
    handler = type("Handler", (MirrorHandler,), {"login": login})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/ascend"


@pytest.fixture
def site(registry, tmp_path, request) -> Iterator[dict]:
    """The dev stack on the loopback registry (its device plugin pinned by digest), at its root or (parametrized)
    under a project path as Harbor keeps one, and mirror, both holding it all."""
    plugin, digest = oci_archive(tmp_path, "plugin", "v6.0.0")
    config = with_site("dev", {"registry": registry + getattr(request, "param", "")})
    files = config["config"]["ascend-npu:packages"]["files"]
    for pkg in files:
        pkg["sha256"] = hashlib.sha256(f"installer {pkg['file']}\n".encode()).hexdigest()
    served = tmp_path / "mirror" / "ascend"
    served.mkdir(parents=True)
    for pkg in files:
        (served / pkg["file"]).write_text(f"installer {pkg['file']}\n")
    mirror, url = serve(served.parent, None)
    secured, secured_url = serve(served.parent, LOGIN)
    config = patched(config, {"set": {
        "ascend-npu:devicePlugin": {"image": {"repository": PLUGIN, "tag": "v6.0.0", "digest": digest}},
        "ascend-npu:packages": {"source": "mirror", "mirrorUrl": url, "files": files}}})
    stack_file = write_stack(config, tmp_path, "site")
    assert run_bundle("--stack", "site", "--stack-file", str(stack_file), "--out", str(tmp_path / "bundle"))[0] == 0
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    for image in manifest["images"]:
        archive = plugin if image["name"] == "devicePlugin" else oci_archive(tmp_path, image["name"], image["tag"])[0]
        push(archive, image["target"])
    try:
        yield {"config": config, "stack_file": stack_file, "manifest": manifest, "served": served,
               "secured_url": secured_url, "tmp_path": tmp_path}
    finally:
        mirror.shutdown()
        secured.shutdown()


def push(archive: Path, target: str) -> None:
    subprocess.run([SKOPEO, "copy", "--quiet", "--all", "--preserve-digests", "--dest-tls-verify=false",
                    f"oci-archive:{archive}", f"docker://{target}"], check=True, capture_output=True)


def check(stack_file: Path, *argv: str) -> tuple[int, str]:
    code, out, err = run_bundle("--stack", "site", "--stack-file", str(stack_file), *argv)
    return code, out + err


def with_packages(site: dict, name: str, packages: dict) -> Path:
    """The site's stack file with another packages section."""
    files = site["config"]["config"]["ascend-npu:packages"]["files"]
    return write_stack(patched(site["config"], {"set": {"ascend-npu:packages": {**packages, "files": files}}}),
                       site["tmp_path"], name)


@needs_skopeo
@needs_registry
@pytest.mark.parametrize("site", ["", "/ascend"], ids=["host", "harbor-project"], indirect=True)
def test_a_site_that_holds_everything_passes(site):
    code, text = check(site["stack_file"], "--check", "site")
    manifest = site["manifest"]
    assert code == 0, text
    # Each image under the registry (and its project), its own path kept: swr.../ascendhub/x -> <registry>/ascendhub/x.
    assert all(i["target"].split("@")[0].rsplit(":", 1)[0] == f"{manifest['registry']}/"
               + i["source"].split("@")[0].rsplit(":", 1)[0].split("/", 1)[1] for i in manifest["images"])
    assert f"3 images in {manifest['registry']}, each manifest's sha256 against its pinned digest" in text
    assert "complete: 3 images and 5 packages as the stack pins them (2 tag-only, by tag alone)" in text
    tag_only = [i["target"] for i in manifest["images"] if not i["digest"]]
    assert len(tag_only) == 2 and all(f"{t}: the tag exists" in text for t in tag_only)
    assert text.count("a tag-only image cannot be proven the same image") == 2
    assert "chart    not checked in site mode" in text


@needs_skopeo
@needs_registry
def test_a_missing_image_another_digest_a_missing_and_a_changed_package_are_each_named(site):
    manifest, tmp_path = site["manifest"], site["tmp_path"]
    plugin, exporter = manifest["images"][0], manifest["images"][1]
    other, other_digest = oci_archive(tmp_path, "other-plugin", "v6.0.0")
    push(other, plugin["target"])
    missing_image = exporter["target"].replace("npu-exporter", "npu-exporter-elsewhere")
    stack_file = write_stack(patched(site["config"], {"set": {"ascend-npu:exporter": {"image": {
        "repository": "swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter-elsewhere", "tag": "v6.0.0"}}}}),
        tmp_path, "broken")
    first, second = manifest["packages"][0]["file"], manifest["packages"][1]["file"]
    (site["served"] / first).unlink()
    (site["served"] / second).write_text("other bytes\n")
    code, text = check(stack_file, "--check", "site")
    assert code == 1 and "site of stack site: 4 of 8 items missing or wrong:" in text, text
    assert f"- image {missing_image}: not found or not readable; skopeo: " in text and "manifest unknown" in text
    assert "Traceback" not in text and "level=fatal" not in text
    assert f"- image {plugin['target']}: the registry holds {other_digest} under this reference, the stack pins " \
           f"{plugin['digest']}" in text
    assert f"- package {first}: http://127.0.0.1:" in text and f"/ascend/{first}: HTTP 404 File not found" in text
    other_sha = hashlib.sha256(b"other bytes\n").hexdigest()
    assert f"- package {second}: http://127.0.0.1:" in text and f"sha256 {other_sha}, the stack pins" in text


@needs_skopeo
@needs_registry
def test_a_mirror_that_asks_for_a_login_gets_it_from_the_environment_and_it_is_never_shown(site, monkeypatch):
    stack_file = with_packages(site, "secured", {"source": "mirror", "mirrorUrl": site["secured_url"]})
    monkeypatch.delenv("ASCEND_NPU_MIRROR_LOGIN", raising=False)
    code, text = check(stack_file, "--check", "site")
    first = site["manifest"]["packages"][0]["file"]
    assert code == 1 and "5 of 8 items missing or wrong" in text, text
    assert f"- package {first}: {site['secured_url']}/{first}: HTTP 401 Unauthorized: the mirror asks for a login; " \
           "set ASCEND_NPU_MIRROR_LOGIN=user:password" in text
    monkeypatch.setenv("ASCEND_NPU_MIRROR_LOGIN", "mirror-user:wrong-Pw")
    code, text = check(stack_file, "--check", "site")
    assert code == 1 and "HTTP 401 Unauthorized: the mirror refused the login in ASCEND_NPU_MIRROR_LOGIN" in text
    assert "wrong-Pw" not in text
    monkeypatch.setenv("ASCEND_NPU_MIRROR_LOGIN", LOGIN)
    code, text = check(stack_file, "--check", "site")
    assert code == 0 and "complete: 3 images and 5 packages as the stack pins them" in text, text
    assert LOGIN.split(":")[1] not in text
    monkeypatch.setenv("ASCEND_NPU_MIRROR_LOGIN", "no-colon-Pw")
    code, text = check(stack_file, "--check", "site")
    assert code == 2 and "ASCEND_NPU_MIRROR_LOGIN is set but not user:password" in text and "no-colon-Pw" not in text


@needs_skopeo
@needs_registry
def test_an_upload_directory_is_read_from_the_project_root_as_the_program_reads_it(site, monkeypatch):
    directory = os.path.relpath(site["served"], ROOT)  # relative: the program's cwd is the project
    stack_file = with_packages(site, "upload", {"source": "upload", "directory": directory})
    monkeypatch.chdir(site["tmp_path"])
    code, text = check(stack_file, "--check", "site")
    assert code == 0 and f"5 packages in {directory} (packages.directory), by sha256" in text, text
    first = site["manifest"]["packages"][0]["file"]
    (site["served"] / first).unlink()
    code, text = check(stack_file, "--check", "site")
    assert code == 1 and f"- package {directory}/{first}: missing (" in text, text


def test_without_skopeo_the_check_says_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, err = run_bundle("--stack", "dev", "--check", "site")
    assert code == 2 and "skopeo not found" in err and "Debian package `skopeo`" in err, err


def test_a_directory_named_site_is_checked_when_written_with_its_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site").mkdir()
    code, out, err = run_bundle("--stack", "dev", "--check", "./site")
    assert code == 1 and "bundle site: 9 of 9 items missing or wrong for stack dev" in err, err
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, err = run_bundle("--stack", "dev", "--check", "site")
    assert code == 2 and "the directory site/ is checked with CHECK=./site" in out and "skopeo not found" in err
