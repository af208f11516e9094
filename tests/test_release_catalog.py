"""The release catalog: every entry names its source, and its facts hold at that tag of mind-cluster."""
from __future__ import annotations

import re

import pytest

from components.config.cluster import Exporter
from components.releases.catalog import UnknownRelease, component_releases, known_releases, release_entry
from tests import mind_cluster_source as source

COMPONENTS = {"device-plugin": "component/ascend-device-plugin/",
              "npu-exporter": "component/npu-exporter/cmd/npu-exporter/"}
ENTRIES = [(c, r) for c in COMPONENTS for r in known_releases(c)]
needs_mirror = pytest.mark.skipif(not source.available(),
                                  reason="set MIND_CLUSTER_REPO to a clone of github.com/Ascend/mind-cluster")


@pytest.mark.parametrize("component,release", ENTRIES)
def test_every_entry_names_its_source_at_its_own_tag(component, release):
    entry = release_entry(component, release)
    assert entry["source"]["repository"] == "github.com/Ascend/mind-cluster"
    assert entry["source"]["tag"] == release  # the image tag is the source tag
    assert re.fullmatch(r"[0-9a-f]{40}", entry["source"]["commit"])
    assert entry["source"]["paths"] and all(p.startswith("component/") for p in entry["source"]["paths"])


def test_an_unknown_release_lists_the_known_ones():
    with pytest.raises(UnknownRelease, match="known releases: v6.0.0, v26.1.0"):
        release_entry("device-plugin", "v6.0.1")


def test_the_stack_models_port_range_is_every_exporter_releases_own():
    bounds = {f.__class__.__name__: getattr(f, "ge", None) or getattr(f, "le", None)
              for f in Exporter.model_fields["port"].metadata}
    for release in known_releases("npu-exporter"):
        assert [bounds["Ge"], bounds["Le"]] == release_entry("npu-exporter", release)["portRange"]


def test_healthz_is_what_v26_serves_and_v6_lacks():
    for component in COMPONENTS:
        v6, v26 = release_entry(component, "v6.0.0"), release_entry(component, "v26.1.0")
        assert v6["healthz"] is None and "enable-healthz" not in v6["flags"]
        assert v26["healthz"]["path"] == "/" and {"enable-healthz", "healthz-address"} <= set(v26["flags"])
    assert "useAscendDocker" in release_entry("device-plugin", "v6.0.0")["flags"]
    assert "useAscendDocker" not in release_entry("device-plugin", "v26.1.0")["flags"]


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_source_commit_is_the_tag(component, release):
    assert source.commit_of(release) == release_entry(component, release)["source"]["commit"]


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_flags_are_those_the_release_defines(component, release):
    assert release_entry(component, release)["flags"] == source.flags(release, COMPONENTS[component])


@needs_mirror
@pytest.mark.parametrize("release", known_releases("npu-exporter"))
def test_metric_names_are_read_from_the_collectors(release):
    catalogued = set(release_entry("npu-exporter", release)["metrics"])
    literal = source.literal_metrics(release, "component/npu-exporter/collector")
    assert literal <= catalogued, sorted(literal - catalogued)
    computed = catalogued - literal  # loops and constant prefixes, expanded by hand: each family must exist
    assert all(re.match(r"npu_chip_info_(hccs_|error_code_\d|\w+)", name) for name in computed)


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_every_source_path_exists_at_the_tag(component, release):
    for path in release_entry(component, release)["source"]["paths"]:
        assert source.show(release, path)


@needs_mirror
def test_v6_910_manager_waits_for_a_cluster_wide_configmap_informer():
    """Why 910/910B get configmaps list/watch in every namespace at v6.0.0."""
    text = source.show("v6.0.0", "component/ascend-device-plugin/pkg/device/ascendtolerance.go")
    assert "ConfigMaps().Informer()" in text and "WaitForCacheSync(wait.NeverStop" in text
    assert "SyncResetCM" in source.show("v6.0.0", "component/ascend-device-plugin/pkg/device/ascend910.go")
    rules = release_entry("device-plugin", "v6.0.0")["rbac"]["chips"]
    assert set(rules) == {"910", "910B"} and rules["910B"][0]["verbs"] == ["list", "watch"]


def test_loader_refuses_an_entry_without_source(tmp_path, monkeypatch):
    from components.releases import catalog

    (tmp_path / "broken.yaml").write_text("releases:\n  v1.0.0: {flags: {}}\n")
    monkeypatch.setattr(catalog, "CATALOG_DIR", tmp_path)
    component_releases.cache_clear()
    try:
        with pytest.raises(ValueError, match="release v1.0.0 has no source repository, tag, paths"):
            component_releases("broken")
    finally:
        component_releases.cache_clear()
