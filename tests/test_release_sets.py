"""One MindCluster release per stack, installers only of catalogued releases, and the matrix and catalog agreeing."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from components.config import SpecError
from components.config.compatibility import load_matrix, load_sets
from components.host.parameters import INSTALLER_CATALOG, installer_flags
from components.plan.recorder import Recorded
from components.plan.stack_plan import EXIT_OK, judge, plan
from components.releases.catalog import component_releases, known_releases
from tests.cluster.stacks import spec_of, stack_raw
from tests.stacks import ROOT, load_stack, patched, write_stack

PLUGIN = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin"
EXPORTER = "swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter"
REASON = "tried ahead on the staging cluster, OPS-5120"


def problems(raw: dict) -> list[str]:
    with pytest.raises(SpecError) as refused:
        spec_of(raw)
    return [str(p) for p in refused.value.problems]


def dev(**sections) -> dict:
    raw = stack_raw("dev")
    for key, value in sections.items():
        raw[key] = {**(raw.get(key) or {}), **value}
    return raw


def test_the_set_picks_the_agents_images_and_the_runtime():
    spec = spec_of(dev(versions={"mindCluster": "6.0.0"}))
    assert (spec.device_plugin.release, spec.exporter.release, spec.versions.docker_runtime) == \
        ("v6.0.0", "v6.0.0", "6.0.0")
    prod = spec_of(stack_raw("prod"))
    assert (prod.versions.mind_cluster, prod.device_plugin.release, prod.exporter.release,
            prod.versions.docker_runtime) == ("26.1.0", "v26.1.0", "v26.1.0", "26.1.0")


def test_an_unset_image_follows_the_set_and_keeps_nothing_of_another_release():
    raw = stack_raw("prod")
    del raw["devicePlugin"], raw["exporter"]
    spec = spec_of(raw)
    assert spec.device_plugin.image.tag == spec.exporter.image.tag == "v26.1.0"


def test_agents_of_another_release_are_refused_naming_the_set_and_the_way_out():
    found = problems(dev(devicePlugin={"image": {"repository": PLUGIN, "tag": "v26.1.0"}},
                         exporter={"image": {"repository": EXPORTER, "tag": "v26.1.0"}}))
    assert len(found) == 2 and all("is MindCluster 26.1.0's, but versions.mindCluster is 6.0.0" in p for p in found)
    assert "releaseOverride {tag: v26.1.0, release: v26.1.0, reason: ...}" in found[0]


def test_one_agent_of_another_release_kept_by_its_override_with_a_reason():
    override = {"tag": "v26.1.0", "release": "v26.1.0", "reason": REASON}
    spec = spec_of(dev(exporter={"image": {"repository": EXPORTER, "tag": "v26.1.0"}, "releaseOverride": override}))
    assert (spec.device_plugin.release, spec.exporter.release) == ("v6.0.0", "v26.1.0")


def test_versions_off_the_sets_tables_are_refused_with_the_documented_lines():
    [problem] = [p for p in problems(dev(versions={"mindCluster": "26.1.0"})) if p.startswith("ascend-npu:versions:")]
    assert "CANN 8.0.RC3 and driver 24.1.rc2 (HDK 24.1.rc2) are outside MindCluster 26.1.0's tables" in problem
    assert "works with CANN 8.5.X, 9.0.X, 9.1.X and HDK 25.5.X, 26.0.X, 26.1.X" in problem


def test_a_runtime_of_another_release_needs_the_override_to_name_it():
    raw = dev(versions={"dockerRuntime": "6.0.RC3"})
    raw["packages"]["files"][4]["file"] = "Ascend-docker-runtime_6.0.RC3_linux-aarch64.run"
    assert any(p.startswith("ascend-npu:versions.dockerRuntime: Ascend Docker Runtime 6.0.RC3 is of no catalogued")
               for p in problems(raw))
    versions = raw["versions"]
    raw["versions"] = {**versions, "compatibilityOverride": {
        "firmware": versions["firmware"], "driver": versions["driver"], "cann": versions["cann"],
        "dockerRuntime": "6.0.RC3", "reason": REASON}}
    assert spec_of(raw).versions.docker_runtime == "6.0.RC3"


def test_an_installer_release_the_catalog_lacks_runs_only_as_a_named_release():
    raw = stack_raw("prod")
    raw["versions"]["driver"] = "25.5.2"
    for item in raw["packages"]["files"]:
        item["file"] = item["file"].replace("npu-driver_25.5.0", "npu-driver_25.5.2")
    refused = [p for p in problems(raw) if p.startswith("ascend-npu:versions.driver:")]
    assert refused and "driver 25.5.2 is not in the release catalog" in refused[0]
    raw["versions"]["releaseOverrides"] = [{"kind": "driver", "version": "25.5.2", "release": "25.5.0",
                                            "reason": REASON}]
    raw["versions"]["compatibilityOverride"] = {"firmware": "7.8.0.5.216", "driver": "25.5.2", "cann": "9.1.0",
                                                "reason": REASON}
    assert spec_of(raw).versions.driver == "25.5.2"


@pytest.mark.parametrize("kind", sorted(INSTALLER_CATALOG, key=lambda k: k.value))
def test_every_catalogued_release_of_a_kind_installs_with_the_same_flags(kind):
    """The node looks an installer's flags up by version, a version only an override names by the catalog's `*`
    entry (its newest release's): that holds only while every release of the kind takes the same flags."""
    flags = {installer_flags(kind, release, "")["fresh"] + "|" + installer_flags(kind, release, "")["upgrade"]
             + "|" + installer_flags(kind, release, "")["uninstall"]
             for release in known_releases(INSTALLER_CATALOG[kind])}
    assert len(flags) == 1, flags


def test_the_matrix_names_catalogued_installers_only_and_every_catalogued_cann_and_driver():
    matrix = load_matrix()
    cann = {c for c, _ in matrix.cann_driver}
    drivers = {d for _, d in matrix.cann_driver} | {d for d, _ in matrix.driver_firmware}
    firmware = {f for _, f in matrix.driver_firmware}
    for named, component in ((cann, "cann"), (drivers, "npu-driver"), (firmware, "npu-firmware")):
        catalogued = {r.lower() for r in known_releases(component)}
        assert named - catalogued == set(), f"the matrix names {component} releases the catalog lacks"
        if component != "npu-firmware":
            assert catalogued - named == set(), f"catalogued {component} releases the matrix does not name"


def test_every_set_is_made_of_catalogued_releases_and_every_agent_release_is_in_one_set():
    sets = load_sets()
    for chosen in sets.sets:
        assert chosen.component("devicePlugin") in known_releases("device-plugin")
        assert chosen.component("npuExporter") in known_releases("npu-exporter")
        assert chosen.component("dockerRuntime") in component_releases("docker-runtime")
        assert chosen.version_problem(chosen.paired_hdk, chosen.paired_cann) is None, chosen.release
    for component, catalog in (("devicePlugin", "device-plugin"), ("npuExporter", "npu-exporter")):
        assert all(sets.of_component(component, release) for release in known_releases(catalog))


def test_a_line_is_two_numbers_and_a_dot():
    chosen = load_sets().get("26.1.0")
    assert chosen.version_problem("25.5.0", "8.5.1") is None
    assert chosen.version_problem("25.50.0", "8.50.0") is not None
    assert chosen.version_problem("26.0.rc1", "9.0.0") is None


def _recorded(entry: dict) -> Recorded:
    return Recorded(urn=entry["urn"], type=entry["type"], name=entry["name"], parent=entry["parent"],
                    custom=entry["custom"], dependencies=entry["dependencies"],
                    property_dependencies=entry["propertyDependencies"], provider=entry["provider"],
                    properties=entry["inputs"], outputs=entry.get("outputs", {}))


def test_the_program_states_a_kept_agent_and_the_pack_refuses_it_unstated(tmp_path):
    """prod with its exporter kept at v6.0.0 plans clean; the same resources without the cluster component's
    statement are what a hand-mixed stack is, and the pack's mandatory rule refuses them in a real preview too."""
    kept = {"tag": "v6.0.0", "release": "v6.0.0", "reason": REASON}
    stack = patched(load_stack("prod"), {"set": {"ascend-npu:exporter.image.tag": "v6.0.0",
                                                 "ascend-npu:exporter.releaseOverride": kept}})
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert plan("kept", tmp_path, write_stack(stack, tmp_path, "kept")) == EXIT_OK
    entries = json.loads((tmp_path / "resources.json").read_text())
    [cluster] = [e for e in entries if e["type"] == "ascend-npu:index:AscendCluster"]
    assert cluster["outputs"]["mindClusterExceptions"] == [{"component": "npuExporter", "tag": "v6.0.0",
                                                            "reason": REASON}]
    del cluster["outputs"]["mindClusterExceptions"]
    report = judge([_recorded(e) for e in entries], ROOT / "policies")
    refused = [v for v in report["violations"] if v["policy"] == "mindcluster-release-set"]
    assert len(refused) == 2 and all("NPU exporter v6.0.0 is MindCluster 6.0.0's, while the stack runs MindCluster "
                                     "26.1.0" in v["message"] for v in refused)  # one DaemonSet per engine
