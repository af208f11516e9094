"""The OS lists of components/releases/os-support.yaml: as the docs cite them, and what each chip's node is given."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.config.hosts import Chip
from components.host.os_support import CATALOG, CatalogError, listed, lists_for, os_lists, parse

DOCS = Path(__file__).resolve().parents[2] / "docs" / "before-you-start.md"


def test_every_chip_has_a_list_and_every_list_is_cited_on_the_docs_page():
    page = DOCS.read_text()
    assert all(lists_for(chip.value) for chip in Chip)
    for found in yaml.safe_load(CATALOG.read_text())["lists"]:
        assert (found["source"].get("url") or found["source"]["commit"][:7]) in page


def test_the_910b_list_is_the_atlas_800t_a2_guide_and_names_what_the_page_names():
    (guide,) = lists_for("910B")
    assert [system.os for system in guide.systems] == [
        "Ubuntu 22.04", "CentOS 7.6", "CTyunOS 22.06", "Kylin V10 SP2", "Kylin V10 SP3", "CUlinux 3.0",
        "UOS V20 (1050u2e)", "BC-Linux V21.10", "openEuler 22.03 LTS"]
    assert listed("910B", "aarch64") == ["bclinux/21.10", "centos/7", "kylin/v10", "openeuler/22.03", "ubuntu/22.04",
                                         "uos/20"]


def test_a_system_is_offered_only_on_the_architectures_its_list_gives():
    assert "debian/10" in listed("310P", "x86_64") and "debian/10" not in listed("310P", "aarch64")
    assert "euleros/2.0/sp8" in listed("910", "aarch64") and "euleros/2.0/sp8" not in listed("910", "x86_64")
    assert "ubuntu/18.04" in listed("310", "aarch64") and "ubuntu/18.04" not in listed("910B", "aarch64")


def test_systems_no_source_maps_to_os_release_match_nothing():
    unmatched = {system.os for found in os_lists() for system in found.systems if system.match is None}
    assert unmatched == {"CTyunOS 22.06", "CUlinux 3.0", "CUlinux 4.0", "HCE 2.0.2506", "Velinux 2.0", "Kylin V11",
                         "UOS V25"}


GOOD = """lists:
  - title: a list
    source: {url: https://example.com/list}
    chips: [910B]
    chips_from: its title
    systems:
      - {os: Ubuntu 22.04, match: ubuntu/22.04}
"""


@pytest.mark.parametrize("broken, says", [
    (GOOD.replace("match: ubuntu/22.04", "match: Ubuntu 22.04"), "is not ID/VERSION_ID"),
    (GOOD.replace("chips: [910B]", "chips: [920]"), "must be known chips"),
    (GOOD.replace("    chips_from: its title\n", ""), "with chips_from"),
    (GOOD.replace("{url: https://example.com/list}", "{}"), "needs a url or a commit"),
    (GOOD.replace("match: ubuntu/22.04}", "match: ubuntu/22.04, arch: [riscv64]}"), "no known architecture"),
    (GOOD.replace("{os: Ubuntu 22.04, ", "{"), "a system needs `os`"),
    ("lists: []\n", "expected `lists:`"),
])
def test_a_catalog_the_check_cannot_use_is_refused_naming_what(broken, says):
    assert parse(GOOD)[0].systems[0].match == "ubuntu/22.04"
    with pytest.raises(CatalogError, match=says):
        parse(broken)
