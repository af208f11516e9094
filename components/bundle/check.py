"""`make bundle CHECK=<dir>`: does a directory hold every image, package and the chart a stack's listing names?"""
from __future__ import annotations

import tarfile
from pathlib import Path

import yaml

from components.bundle.oci_archive import ArchiveProblem, streamed_sha256, verify_archive
from components.chart.text_files import CHART_NAME


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    with path.open("rb") as handle:
        return streamed_sha256(handle)[0]


def package_problems(directory: Path, packages: list[dict], under: str = "packages") -> list[str]:
    """Each package missing from DIRECTORY/UNDER/ or not of its sha256."""
    problems = []
    for pkg in packages:
        path, shown = directory / under / pkg["file"], f"{under}/{pkg['file']}"
        if not path.is_file():
            problems.append(f"{shown}: missing ({pkg['kind']}, sha256 {pkg['sha256']})")
        elif (found := file_sha256(path)) != pkg["sha256"]:
            problems.append(f"{shown}: sha256 {found}, the stack pins {pkg['sha256']}")
    return problems


def image_problems(directory: Path, images: list[dict]) -> list[str]:
    """Each image whose OCI archive is missing, holds another image, or has a missing or damaged blob."""
    problems = []
    for image in images:
        path = directory / image["archive"]
        if not path.is_file():
            problems.append(f"{image['archive']}: missing ({image['source']})")
            continue
        try:
            verify_archive(str(path), image["tag"], image["digest"])
        except ArchiveProblem as exc:
            problems.append(f"{image['archive']}: {exc}")
    return problems


def same_file(name: str, held: str | None, generated: str) -> bool:
    """A packaged chart file is the generated one; Helm writes Chart.yaml anew when it packages, so its data counts."""
    if held is None or name != "Chart.yaml":
        return held == generated
    return yaml.safe_load(held) == yaml.safe_load(generated)


def chart_problems(directory: Path, chart: dict, files: dict[str, str]) -> list[str]:
    """The chart package missing, or its files not the ones this program generates."""
    path = directory / chart["file"]
    if not path.is_file():
        return [f"{chart['file']}: missing (the chart, version {chart['version']})"]
    try:
        with tarfile.open(path) as tar:
            held = {m.name.removeprefix(f"{CHART_NAME}/"): tar.extractfile(m) for m in tar.getmembers() if m.isfile()}
            texts = {name: handle.read().decode() for name, handle in held.items() if handle is not None}
    except (tarfile.TarError, UnicodeDecodeError) as exc:
        return [f"{chart['file']}: not a readable chart package ({exc})"]
    differ = sorted(n for n in files if not same_file(n, texts.get(n), files[n])) + sorted(set(texts) - set(files))
    return [f"{chart['file']}: not this release's chart ({', '.join(differ[:5])} differ)"] if differ else []


def bundle_problems(directory: Path, manifest: dict, chart_files: dict[str, str]) -> list[str]:
    """Everything the listing names that DIRECTORY lacks or holds wrong, one line each."""
    carried = [image for image in manifest["images"] if image["carried"]]
    return (image_problems(directory, carried) + package_problems(directory, manifest["packages"])
            + chart_problems(directory, manifest["chart"], chart_files))
