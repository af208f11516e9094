"""The validation Job of each chip type: its node (a canary of that chip) and its image (stack's or catalog's)."""
from __future__ import annotations

from typing import Optional, Sequence

from components.config.hosts import Chip, NodeSpec
from components.config.images import Image
from components.config.problems import Problem
from components.releases.catalog import component_releases

CATALOG = "cann-images"


def catalogued_image(cann: str, chip: str) -> Optional[Image]:
    """The CANN image the catalog names for this CANN version (any case) and chip, if any."""
    for version, entry in component_releases(CATALOG).items():
        if version.lower() == cann.lower() and chip in entry.tags:
            return Image(repository=entry.repository, tag=entry.tags[chip])
    return None


def catalogued_for(chip: str) -> list[str]:
    """The CANN versions the catalog has an image of this chip for."""
    return [version for version, entry in component_releases(CATALOG).items() if chip in entry.tags]


def job_image(images: dict, cann: str, chip: str) -> Optional[Image]:
    """The stack's image for the chip, else the catalogued one of its CANN."""
    return images.get(Chip(chip)) or catalogued_image(cann, chip)


def parsed_job_image(images: dict, cann: str, chip: str) -> Image:
    """The job_image of a parsed stack, which check_validation_images made sure exists."""
    image = job_image(images, cann, chip)
    if image is None:
        raise LookupError(f"no validation image for {chip} with CANN {cann}")
    return image


def job_nodes(nodes: Sequence[NodeSpec], canaries: Sequence[str]) -> dict[str, str]:
    """Chip type -> the canary its Job runs on: the first canary of that chip (every chip present has one)."""
    by_name = {n.name: n for n in nodes}
    jobs: dict[str, str] = {}
    for name in canaries:
        jobs.setdefault(by_name[name].chip.value, name)
    return {chip.value: jobs[chip.value] for chip in Chip if chip.value in jobs}


def canaries_per_chip(nodes: Sequence[NodeSpec], listed: Sequence[str]) -> tuple[str, ...]:
    """The listed canaries, plus the first node of each chip type none of them has (in node order)."""
    have = {n.chip for n in nodes if n.name in listed}
    picked = list(listed)
    for node in nodes:
        if node.chip not in have:
            have.add(node.chip)
            picked.append(node.name)
    return tuple(picked)


def check_validation_images(validation, nodes: Sequence[NodeSpec], versions) -> list[Problem]:
    """Every chip type present has an image for its Job: the stack's, or the catalog's for `versions.cann`."""
    if validation is None or not validation.enabled:
        return []
    problems = []
    for chip in dict.fromkeys(n.chip.value for n in nodes):
        if job_image(validation.images, versions.cann, chip) is None:
            known = ", ".join(catalogued_for(chip)) or "none"
            problems.append(Problem(f"validation.images.{chip}", f"no catalogued CANN {versions.cann} image for "
                                    f"{chip} (components/releases/{CATALOG}.yaml has {chip} images for CANN {known}); "
                                    f"write the image your {chip} workloads run with CANN {versions.cann}, e.g. "
                                    f"{{repository: registry.example.com/ascend/cann, tag: ...}}, or set "
                                    "validation.enabled: false"))
    return problems
