"""The air-gapped bundle: `make bundle` lists exactly the images the plan deploys, the packages the nodes install and
the chart, and `CHECK=<dir>` passes only a directory that holds every one intact. Image archives are written by
Debian's skopeo and imported by Debian's containerd, as docs/air-gapped.md tells users; no registry is reached."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import shutil
import subprocess
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from components.bundle.__main__ import main as bundle_main
from components.bundle.listing import BundleError, listing
from tests.stacks import ROOT, load_stack, write_stack
from tests.test_site_registry import SITE, images, planned, with_site

SKOPEO = shutil.which("skopeo")
needs_skopeo = pytest.mark.skipif(SKOPEO is None, reason="skopeo not installed (Debian package `skopeo`)")


def run_bundle(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = bundle_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def manifest_of(stack: dict, tmp_path: Path, name: str) -> dict:
    out = tmp_path / f"{name}-bundle"
    code, _, err = run_bundle("--stack", "case", "--stack-file", str(write_stack(stack, tmp_path, name)),
                              "--out", str(out))
    assert code == 0, err
    return json.loads((out / "manifest.json").read_text())


@pytest.mark.parametrize("stack, site", [("dev", False), ("prod", False), ("dev", True), ("prod", True)])
def test_the_bundle_lists_every_image_the_plan_deploys_and_nothing_else(stack, site, tmp_path):
    config = with_site(stack, {"registry": SITE, "pullSecret": "site-pull"}) if site else load_stack(stack)
    deployed = {i for r in planned(config, tmp_path, "plan") for i in images(r["inputs"])}
    manifest = manifest_of(config, tmp_path, "bundle")
    assert {i["pulled"] for i in manifest["images"]} == deployed and len(manifest["images"]) == len(deployed)
    registry = SITE if site else (config["config"].get("ascend-npu:images") or {}).get("registry")
    for image in manifest["images"]:
        source_repository = image["source"].split("@")[0] if "@" in image["source"] \
            else image["source"].rsplit(":", 1)[0]
        assert image["target"].startswith(f"{registry}/" if registry else f"{source_repository}:")
        if image["digest"]:  # copied by digest, so the mirrored copy is provably the same image
            assert image["source"].endswith(f"@{image['digest']}") and image["pulled"].endswith(image["digest"])
    stack_files = {f["file"]: f["sha256"] for f in config["config"]["ascend-npu:packages"]["files"]}
    assert manifest["packages"] and {p["file"]: p["sha256"] for p in manifest["packages"]}.items() <= \
        stack_files.items()


def test_packages_are_those_of_the_stacks_chips_and_architectures(tmp_path):
    config = load_stack("prod")
    files = config["config"]["ascend-npu:packages"]["files"]
    config["config"]["ascend-npu:packages"]["files"] = files + [
        {"kind": "driver", "chip": "910", "arch": "x86_64",
         "file": "Ascend-hdk-910-npu-driver_25.5.0_linux-x86-64.run", "sha256": "ab" * 32}]
    listed = {p["file"] for p in manifest_of(config, tmp_path, "extra")["packages"]}
    assert "Ascend-hdk-910-npu-driver_25.5.0_linux-x86-64.run" not in listed  # no 910 node in the stack
    assert listed == {f["file"] for f in files}


def test_a_plan_that_pulls_an_image_the_listing_lacks_is_refused():
    from components.cluster.values_contract import chart_values
    from components.config.config_source import spec_from_values
    from components.plan.stack_plan import load_config, run_stack
    config = load_config("dev")
    spec = spec_from_values(config.values, config.secret_keys)
    resources = run_stack(config)
    job = next(r for r in resources if r.type == "kubernetes:batch/v1:Job")
    job.properties["spec"]["template"]["spec"]["containers"][0]["image"] = "quay.io/other/image:v1"
    with pytest.raises(BundleError, match="planned, not in the bundle: quay.io/other/image:v1"):
        listing("dev", spec, chart_values(spec, managed_by="Helm"), resources, {"file": "c", "version": "0"})


def test_a_rerun_with_nothing_new_touches_no_file(tmp_path):
    out = tmp_path / "bundle"
    assert run_bundle("--stack", "dev", "--out", str(out))[0] == 0
    (out / "packages" / "mine.run").write_text("the operator's own file")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert run_bundle("--stack", "dev", "--out", str(out))[0] == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def oci_archive(tmp_path: Path, name: str, tag: str) -> tuple[Path, str]:
    """An image of one layer written by skopeo as `oci-archive:FILE:TAG`, as docs/air-gapped.md does; its digest
    (kept: --preserve-digests makes skopeo fail rather than write the image anew)."""
    layout = tmp_path / "layouts" / name
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def put(data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"digest": f"sha256:{digest}", "size": len(data)}
    layer_tar = io.BytesIO()
    with tarfile.open(fileobj=layer_tar, mode="w") as tar:
        body = f"{name}\n".encode()
        info = tarfile.TarInfo("image-name")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    layer = put(gzip.compress(layer_tar.getvalue(), mtime=0))
    diff_id = f"sha256:{hashlib.sha256(layer_tar.getvalue()).hexdigest()}"
    config = put(json.dumps({"architecture": "arm64", "os": "linux", "config": {},
                             "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode())
    manifest = put(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer}]}).encode())
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
         "annotations": {"org.opencontainers.image.ref.name": "built"}}]}))
    archive = tmp_path / "archives" / f"{name}.tar"
    archive.parent.mkdir(exist_ok=True)
    subprocess.run([SKOPEO, "copy", "--quiet", "--all", "--preserve-digests", f"oci:{layout}:built",
                    f"oci-archive:{archive}:{tag}"], check=True)
    return archive, manifest["digest"]


@pytest.fixture
def complete_bundle(tmp_path) -> tuple[Path, Path]:
    """A stack of the dev cluster with a site registry, its device plugin pinned by digest, and a bundle directory
    holding every item: written by `make bundle`, archives by skopeo, installers of the pinned sha256."""
    config = with_site("dev", {"registry": SITE, "pullSecret": "site-pull"})
    for pkg in config["config"]["ascend-npu:packages"]["files"]:
        pkg["sha256"] = hashlib.sha256(f"installer {pkg['file']}\n".encode()).hexdigest()
    plugin, digest = oci_archive(tmp_path, "plugin", "v6.0.0")
    config["config"]["ascend-npu:devicePlugin"] = {"image": {
        "repository": "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin", "tag": "v6.0.0",
        "digest": digest}}
    stack_file = write_stack(config, tmp_path, "site")
    out = tmp_path / "bundle"
    assert run_bundle("--stack", "site", "--stack-file", str(stack_file), "--out", str(out))[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    for pkg in manifest["packages"]:
        (out / "packages" / pkg["file"]).write_text(f"installer {pkg['file']}\n")
    for image in manifest["images"]:
        archive = plugin if image["name"] == "devicePlugin" else oci_archive(tmp_path, image["name"], image["tag"])[0]
        shutil.copy(archive, out / image["archive"])
    return stack_file, out


def check(stack_file: Path, directory: Path) -> tuple[int, str]:
    code, out, err = run_bundle("--stack", "site", "--stack-file", str(stack_file), "--check", str(directory))
    return code, out + err


@needs_skopeo
def test_the_check_passes_a_complete_bundle_and_names_each_missing_or_wrong_item(complete_bundle, tmp_path):
    stack_file, out = complete_bundle
    code, text = check(stack_file, out)
    assert code == 0 and "complete for stack site: 3 images (every blob checked), 5 packages" in text, text
    manifest = json.loads((out / "manifest.json").read_text())
    plugin, exporter = (out / manifest["images"][0]["archive"]), (out / manifest["images"][1]["archive"])
    exporter.unlink()
    wrong_digest = oci_archive(tmp_path, "other-plugin", "v6.0.0")[0]
    shutil.copy(wrong_digest, plugin)
    first = out / "packages" / manifest["packages"][0]["file"]
    first.write_text("tampered\n")
    code, text = check(stack_file, out)
    assert code == 1 and "3 of 9 items missing or wrong" in text, text
    assert f"{manifest['images'][1]['archive']}: missing" in text
    assert f"but the stack pins {manifest['images'][0]['digest']}" in text
    assert f"packages/{first.name}: sha256 " in text


@needs_skopeo
def test_a_damaged_layer_and_a_foreign_chart_are_found(complete_bundle):
    stack_file, out = complete_bundle
    archive = out / json.loads((out / "manifest.json").read_text())["images"][1]["archive"]
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
    layer = max((m for m, data in members if data is not None and m.name.startswith("blobs/")), key=lambda m: m.size)
    with tarfile.open(archive, "w") as tar:
        for member, data in members:
            if member is layer:
                data = data[:-1] + bytes([data[-1] ^ 1])
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    chart = next((out / "charts").glob("*.tgz"))
    with tarfile.open(chart) as tar:
        files = [(m, tar.extractfile(m).read()) for m in tar.getmembers() if m.isfile()]
    with tarfile.open(chart, "w:gz") as tar:
        for member, data in files:
            data = data + b"# changed\n" if member.name.endswith("values.yaml") else data
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    code, text = check(stack_file, out)
    assert code == 1 and f"blob sha256:{layer.name.rsplit('/', 1)[-1]} is damaged" in text, text
    assert "not this release's chart (values.yaml differ)" in text


@needs_skopeo
@pytest.mark.skipif(shutil.which("containerd") is None or not hasattr(__import__("os"), "geteuid")
                    or __import__("os").geteuid() != 0, reason="needs Debian's containerd and root")
def test_ctr_imports_an_archive_under_the_names_the_pods_pull(complete_bundle, tmp_path):
    """docs/air-gapped.md's `ctr images import` on Debian's containerd: the Pod's `repo:tag@digest` resolves."""
    _, out = complete_bundle
    image = json.loads((out / "manifest.json").read_text())["images"][0]
    root = tmp_path / "ctd"
    root.mkdir()
    (root / "config.toml").write_text(f'version = 2\nroot = "{root}/root"\nstate = "{root}/state"\n'
                                      f'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                                      f'[grpc]\n  address = "{root}/sock"\n')
    daemon = subprocess.Popen(["containerd", "--config", str(root / "config.toml")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        ctr = ["ctr", "--address", str(root / "sock"), "--namespace", "k8s.io"]
        for _ in range(100):
            if subprocess.run([*ctr, "version"], capture_output=True).returncode == 0:
                break
            __import__("time").sleep(0.1)
        base = image["target"].rsplit(":", 1)[0]
        subprocess.run([*ctr, "images", "import", "--all-platforms", "--digests", "--base-name", base,
                        str(out / image["archive"])], check=True, capture_output=True)
        names = subprocess.run([*ctr, "images", "ls", "-q"], check=True, capture_output=True, text=True).stdout.split()
    finally:
        daemon.terminate()
        daemon.wait(10)
    assert sorted(names) == sorted([image["target"], f"{base}@{image['digest']}"])


def test_make_bundle_as_the_docs_run_it(tmp_path):
    """`make bundle STACK=prod`, then `make bundle STACK=prod CHECK=<dir>` on a directory that lacks everything."""
    made = subprocess.run(["make", "--no-print-directory", "bundle", "STACK=prod"], cwd=ROOT, capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    out = ROOT / "build" / "prod" / "bundle"
    assert "bundle of stack prod: 4 images, 10 packages" in made.stdout
    # prod's 310P validation image is built at the site: listed, checked at the site, not carried
    assert "registry.prod.corp.example/ascend/cann:9.1.0-310p-ubuntu22.04-py3.12 (already in the site registry" \
        in made.stdout
    assert (out / "images.txt").read_text().count("\n") == 3 and (out / "packages.sha256").read_text().count("\n") == 10
    checked = subprocess.run(["make", "--no-print-directory", "bundle", "STACK=prod", f"CHECK={tmp_path}"], cwd=ROOT,
                             capture_output=True, text=True)
    assert checked.returncode != 0 and "14 of 14 items missing or wrong for stack prod" in checked.stderr


def test_a_bundle_directory_that_cannot_be_written_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    code, _, err = run_bundle("--stack", "dev", "--out", str(tmp_path / "file" / "bundle"))
    assert code == 2 and err.startswith(f"error: OUT={tmp_path / 'file' / 'bundle'}: cannot write the bundle there")
    assert "Traceback" not in err


@pytest.mark.parametrize("content, problem", [
    (b"not a tar at all", "not a readable OCI archive"),
    ({"index.json": b"{}"}, "not an OCI archive (no oci-layout)"),
    ({"oci-layout": b"{}", "index.json": b"[1, 2]"}, "not a readable OCI archive"),
    ({"oci-layout": b"{}", "index.json": b'{"manifests": [{"digest": "sha256:' + b"0" * 64 + b'", '
      b'"mediaType": "application/vnd.oci.image.manifest.v1+json", '
      b'"annotations": {"org.opencontainers.image.ref.name": "v6.0.0"}}]}'}, "no blobs/sha256/" + "0" * 64),
])
def test_an_archive_that_is_not_the_image_is_named_not_a_traceback(tmp_path, content, problem):
    from components.bundle.oci_archive import ArchiveProblem, verify_archive
    path = tmp_path / "image.tar"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        with tarfile.open(path, "w") as tar:
            for name, data in content.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ArchiveProblem, match=re.escape(problem)):
        verify_archive(str(path), "v6.0.0", None)


def test_an_image_already_at_the_site_is_listed_and_not_carried_and_its_own_registry_is_its_target(tmp_path):
    config = with_site("prod", {"registry": "registry.prod.corp.example"})
    config["config"]["ascend-npu:validation"]["images"]["910B"]["registry"] = "cann.mirror.example"
    images = {i["name"]: i for i in manifest_of(config, tmp_path, "own")["images"]}
    own, site_built = images["validation.910B"], images["validation.310P"]
    assert own["source"].startswith("quay.io/ascend/cann@sha256:") and own["carried"]
    assert own["target"] == "cann.mirror.example/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12"
    assert not site_built["carried"] and site_built["target"].startswith("registry.prod.corp.example/ascend/cann:")
    lines = (tmp_path / "own-bundle" / "images.txt").read_text().splitlines()
    assert len(lines) == 3 and not any("310p" in line for line in lines)
