"""The release catalog: every entry names its source, and its facts hold at that tag of mind-cluster."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from components.config.cluster import Exporter
from components.releases import catalog
from components.releases.catalog import (
    CatalogError,
    UnknownRelease,
    component_releases,
    known_releases,
    parse_releases,
    release_entry,
)
from components.releases.entries import Mount
from tests import mind_cluster_source as source

COMPONENTS = {"device-plugin": "component/ascend-device-plugin/",
              "npu-exporter": "component/npu-exporter/cmd/npu-exporter/"}
ENTRIES = [(c, r) for c in COMPONENTS for r in known_releases(c)]
needs_mirror = pytest.mark.skipif(not source.available(),
                                  reason="set MIND_CLUSTER_REPO to a clone of github.com/Ascend/mind-cluster")


@pytest.mark.parametrize("component,release", ENTRIES)
def test_every_entry_names_its_source_at_its_own_tag(component, release):
    entry = release_entry(component, release)
    assert entry.source.repository == "github.com/Ascend/mind-cluster"
    assert entry.source.tag == release  # the image tag is the source tag
    assert re.fullmatch(r"[0-9a-f]{40}", entry.source.commit)
    assert entry.source.paths and all(p.startswith("component/") for p in entry.source.paths)


def test_an_unknown_release_lists_the_known_ones():
    with pytest.raises(UnknownRelease, match="known releases: v6.0.0, v26.1.0"):
        release_entry("device-plugin", "v6.0.1")


def test_the_stack_models_port_range_is_every_exporter_releases_own():
    bounds = {f.__class__.__name__: getattr(f, "ge", None) or getattr(f, "le", None)
              for f in Exporter.model_fields["port"].metadata}
    for release in known_releases("npu-exporter"):
        assert [bounds["Ge"], bounds["Le"]] == release_entry("npu-exporter", release).port_range


def test_healthz_is_what_v26_serves_and_v6_lacks():
    for component in COMPONENTS:
        v6, v26 = release_entry(component, "v6.0.0"), release_entry(component, "v26.1.0")
        assert v6.healthz is None and "enable-healthz" not in v6.flags
        assert v26.healthz.path == "/" and {"enable-healthz", "healthz-address"} <= set(v26.flags)
    assert "useAscendDocker" in release_entry("device-plugin", "v6.0.0").flags
    assert "useAscendDocker" not in release_entry("device-plugin", "v26.1.0").flags


def test_only_a_release_with_the_duplicate_detector_mounts_dockers_socket():
    v6, v26 = (release_entry("device-plugin", release) for release in ("v6.0.0", "v26.1.0"))
    assert v6.detector_mounts == [] and v6.engine_detector_mounts == {}
    assert set(v26.engine_detector_mounts) == {"docker"}  # containerd nodes need only what every node gets
    [socket] = v26.engine_detector_mounts["docker"]
    assert (socket.path, socket.type, socket.read_only) == ("/run/docker.sock", "Socket", True)


def test_an_engine_the_project_does_not_run_is_refused():
    text = (catalog.CATALOG_DIR / "device-plugin.yaml").read_text(encoding="utf-8")
    with pytest.raises(CatalogError, match="release v26.1.0: engineDetectorMounts.isulad"):
        parse_releases("device-plugin", text.replace("      docker:\n", "      isulad:\n"))


DETECTOR = "component/ascend-device-plugin/pkg/duplicatedetector/"


@needs_mirror
@pytest.mark.parametrize("release", known_releases("device-plugin"))
def test_engine_sockets_are_those_the_duplicate_detector_dials(release):
    entry = release_entry("device-plugin", release)
    if not source.go_files(release, DETECTOR):  # no detector at this tag
        assert not entry.detector_mounts and not entry.engine_detector_mounts
        return
    found = source.constants(release, DETECTOR)
    docker = found["defaultDockerAddress"].removeprefix("unix://")
    assert [(m.path, m.type) for m in entry.engine_detector_mounts["docker"]] == [(docker, "Socket")]
    assert any(found["defaultContainerdAddr"].startswith(m.path + "/") for m in entry.detector_mounts)


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_source_commit_is_the_tag(component, release):
    assert source.commit_of(release) == release_entry(component, release).source.commit


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_flags_are_those_the_release_defines(component, release):
    assert release_entry(component, release).flags == source.flags(release, COMPONENTS[component])


@needs_mirror
@pytest.mark.parametrize("release", known_releases("npu-exporter"))
def test_metric_names_are_read_from_the_collectors(release):
    catalogued = set(release_entry("npu-exporter", release).metrics)
    literal = source.literal_metrics(release, "component/npu-exporter/collector")
    assert literal <= catalogued, sorted(literal - catalogued)
    computed = catalogued - literal  # loops and constant prefixes, expanded by hand: each family must exist
    assert all(re.match(r"npu_chip_info_(hccs_|error_code_\d|\w+)", name) for name in computed)


@needs_mirror
@pytest.mark.parametrize("component,release", ENTRIES)
def test_every_source_path_exists_at_the_tag(component, release):
    for path in release_entry(component, release).source.paths:
        assert source.show(release, path)


@needs_mirror
def test_v6_910_manager_waits_for_a_cluster_wide_configmap_informer():
    """Why 910/910B get configmaps list/watch in every namespace at v6.0.0."""
    text = source.show("v6.0.0", "component/ascend-device-plugin/pkg/device/ascendtolerance.go")
    assert "ConfigMaps().Informer()" in text and "WaitForCacheSync(wait.NeverStop" in text
    assert "SyncResetCM" in source.show("v6.0.0", "component/ascend-device-plugin/pkg/device/ascend910.go")
    rules = release_entry("device-plugin", "v6.0.0").rbac.chips
    assert set(rules) == {"910", "910B"} and rules["910B"][0].verbs == ["list", "watch"]


CANN_ENTRY = """\
releases:
  8.0.0:
    source: {repository: github.com/Ascend/ascend-deployer, tag: master, paths: [install.yml]}
    installer:
      flags: [--install]
      fresh: [--install]
      upgrade: [--upgrade]
      uninstall: [--uninstall]
      exit_codes: {"0": installed}
      toolkit_record: toolkit.info
      kernels_record: kernels.info
"""


@pytest.mark.parametrize("component", sorted(catalog.KINDS))
def test_every_catalog_file_loads_as_its_kinds_model(component):
    assert all(isinstance(entry, catalog.KINDS[component]) for entry in component_releases(component).values())


def test_a_well_formed_entry_loads_as_its_kinds_model():
    entry = parse_releases("cann", CANN_ENTRY)["8.0.0"]
    assert entry.installer.flags == ["--install"] and entry.installer.exit_codes == {0: "installed"}


@pytest.mark.parametrize("change, field, problem", [
    (("      kernels_record: kernels.info\n", ""), "installer.kernels_record", "missing"),
    (("exit_codes: {\"0\": installed}", "exit_codes: {\"0\": [installed]}"), "installer.exit_codes.0",
     "valid string"),
    (("      flags: [--install]", "      flags: --install"), "installer.flags", "valid list"),
    (("      toolkit_record:", "      tookit_record:"), "installer.tookit_record", "not a field of this kind"),
    (("paths: [install.yml]", "paths: []"), "source.paths", "at least 1 item"),
])
def test_a_malformed_entry_fails_at_load_naming_file_release_and_field(change, field, problem):
    text = CANN_ENTRY.replace(*change)
    assert text != CANN_ENTRY
    with pytest.raises(CatalogError, match=rf"^cann\.yaml: release 8\.0\.0: .*{re.escape(field)}: .*{problem}"):
        parse_releases("cann", text)


def test_a_catalog_directory_with_a_broken_file_fails_when_the_component_is_read(tmp_path, monkeypatch):
    (tmp_path / "cann.yaml").write_text(CANN_ENTRY.replace("    source:", "    sources:"))
    monkeypatch.setattr(catalog, "CATALOG_DIR", tmp_path)
    component_releases.cache_clear()
    try:
        with pytest.raises(CatalogError, match="cann.yaml: release 8.0.0: source: missing.*sources: not a field"):
            component_releases("cann")
    finally:
        component_releases.cache_clear()


def test_a_release_number_yaml_reads_as_a_number_must_be_quoted():
    with pytest.raises(CatalogError, match="release 8.1 must be written as a string"):
        parse_releases("cann", CANN_ENTRY.replace("  8.0.0:", "  8.1:"))


PLUGIN_MANIFESTS = {"v6.0.0": "ascendplugin-910.yaml", "v26.1.0": "ascendplugin.yaml"}
PLUGIN_BUILD, EXPORTER_BUILD = "component/ascend-device-plugin/build/", "component/npu-exporter/build/"


def manifest_pod(tag: str, path: str) -> tuple[dict, list[str], list]:
    """(pod spec, flags of the container's shell command line, ClusterRole rules) of a manifest at the tag."""
    objects = source.manifest_objects(tag, path)
    [daemonset] = [o for o in objects if o.get("kind") == "DaemonSet"]
    pod = daemonset["spec"]["template"]["spec"]
    words = " ".join(pod["containers"][0]["args"]).replace(";", " ").split()
    roles = [o for o in objects if o.get("kind") == "ClusterRole"]
    return pod, [w for w in words if w.startswith("-")], roles[0]["rules"] if roles else []


def volumes(pod: dict) -> dict[str, tuple[str, str, bool]]:
    """Volume name -> (host path, hostPath type, read-only in the first container)."""
    read_only = {m["name"]: m.get("readOnly", False) for m in pod["containers"][0]["volumeMounts"]}
    return {v["name"]: (v["hostPath"]["path"], v["hostPath"].get("type", ""), read_only.get(v["name"], False))
            for v in pod["volumes"] if "hostPath" in v}


def catalogued(mounts: list[Mount]) -> dict[str, tuple[str, str, bool]]:
    return {m.name: (m.path, m.type or "", m.read_only) for m in mounts}


@needs_mirror
@pytest.mark.parametrize("release", known_releases("device-plugin"))
def test_plugin_args_env_mounts_and_rules_are_its_manifests(release):
    entry = release_entry("device-plugin", release)
    pod, flags, rules = manifest_pod(release, PLUGIN_BUILD + PLUGIN_MANIFESTS[release])
    assert flags == entry.args + (entry.healthz.flags if entry.healthz else [])
    assert pod["containers"][0]["env"] == [var.manifest() for var in entry.env]
    assert volumes(pod) == catalogued(entry.mounts)
    assert pod.get("hostPID", False) == entry.host_pid
    proxy = [r for r in rules if "nodes/proxy" in r["resources"]]
    assert [r["verbs"] for r in proxy] == [r.verbs for r in entry.rbac.cluster if "nodes/proxy" in r.resources]
    volcano_pod, volcano_flags, _ = manifest_pod(release, PLUGIN_BUILD + "ascendplugin-volcano.yaml")
    assert [f for f in volcano_flags if f not in flags] == entry.volcano_args
    added = {k: v for k, v in volumes(volcano_pod).items() if k not in volumes(pod)}
    assert added == catalogued(entry.volcano_mounts)


@needs_mirror
@pytest.mark.parametrize("release", known_releases("npu-exporter"))
def test_exporter_args_and_mounts_are_its_manifests(release):
    entry = release_entry("npu-exporter", release)
    pod, flags, _ = manifest_pod(release, EXPORTER_BUILD + "npu-exporter.yaml")
    interval = [f"-updateTime={entry.update_time}"] if entry.update_time is not None else []
    expected = [a for arg in entry.args for a in (interval if arg == "{updateTime}" else [arg.format(port=8082)])]
    assert flags == expected + (entry.healthz.flags if entry.healthz else [])
    assert volumes(pod) == catalogued(entry.mounts)


@needs_mirror
@pytest.mark.parametrize("release", known_releases("npu-exporter"))
def test_exporter_labels_are_those_its_collectors_write(release):
    found = source.label_names(release, "component/npu-exporter/collector")
    assert set(release_entry("npu-exporter", release).labels) == found


@needs_mirror
def test_v26_exporter_interval_is_per_group_unless_set():
    """Why the program passes no -updateTime at v26.1.0 unless the stack sets one."""
    text = source.show("v26.1.0", "component/npu-exporter/collector/common/npu_collector.go")
    assert "updateTime > 0 indicates legacy compatibility mode" in text
    assert "-updateTime" not in " ".join(manifest_pod("v26.1.0", EXPORTER_BUILD + "npu-exporter.yaml")[1])


CANN_IMAGE_REPO = os.environ.get("CANN_IMAGE_REPO", "/nonexistent")  # a clone of github.com/Ascend/cann-container-image


@pytest.mark.parametrize("cann", known_releases("cann-images"))
def test_cann_image_tags_follow_the_naming_of_their_cann_and_chip(cann):
    entry = release_entry("cann-images", cann)
    assert entry.source.repository == "github.com/Ascend/cann-container-image"
    assert set(entry.platforms) == {"x86_64", "aarch64"}
    for chip, tag in entry.tags.items():
        token = "a3" if chip == "910C" else chip.lower()  # the images name Atlas A3 by its product, as its packages do
        assert re.fullmatch(rf"{re.escape(cann.lower())}-{token}-(ubuntu|openeuler)[0-9.]+-py3\.[0-9]+", tag)


@pytest.mark.skipif(not Path(CANN_IMAGE_REPO, "HEAD").exists() and not Path(CANN_IMAGE_REPO, ".git").exists(),
                    reason="set CANN_IMAGE_REPO to a clone of github.com/Ascend/cann-container-image")
@pytest.mark.parametrize("cann", known_releases("cann-images"))
def test_cann_image_tags_are_published_at_the_source_commit(cann):
    entry = release_entry("cann-images", cann)
    for path in entry.source.paths:
        text = subprocess.run(["git", "-C", CANN_IMAGE_REPO, "show", f"{entry.source.tag}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        assert text
    listing = subprocess.run(["git", "-C", CANN_IMAGE_REPO, "show",
                              f"{entry.source.tag}:{entry.source.paths[0]}"],
                             capture_output=True, text=True, check=True).stdout
    for tag in entry.tags.values():
        assert f'"{tag}"' in listing, tag
