"""The committed chart is what the generator makes, byte for byte, laid out as the project's Helm rules say."""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys

import helm_python
import pytest
import yaml

from components.chart.__main__ import main
from components.chart.text_files import CHART_NAME
from components.chart.writer import CHART_DIR, HELPERS, ROOT, chart_files, drift, write_chart
from components.cluster.common import metadata, node_labels
from components.cluster.dashboard_access import rbac as dashboard_access
from components.cluster.validation import job as validation_job
from components.releases.catalog import known_releases

from .rendering import as_values_file, merged, render

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
CHIPS = ("910", "910B", "910C", "310", "310P")
EVERYTHING = {"devicePlugin": {"chips": list(CHIPS), "containerRuntimes": ["containerd", "docker"]},
              "exporter": {"containerRuntimes": ["containerd", "docker"]},
              "validation": {"enabled": True, "jobs": {chip: {"node": f"npu-{chip.lower()}", "image": {
                  "repository": "registry.example.com/ascend/cann", "tag": f"8.0.0-{chip.lower()}"}}
                  for chip in CHIPS}},
              "dashboardAccess": {"enabled": True, "group": "ascend-operators"}}


def committed() -> dict[str, str]:
    return {p.relative_to(CHART_DIR).as_posix(): p.read_text() for p in CHART_DIR.rglob("*") if p.is_file()}


def test_the_committed_chart_is_what_the_generator_makes(tmp_path):
    write_chart(tmp_path / CHART_NAME)
    generated = {p.relative_to(tmp_path / CHART_NAME).as_posix(): p.read_text()
                 for p in (tmp_path / CHART_NAME).rglob("*") if p.is_file()}
    assert sorted(generated) == sorted(committed()), "files differ; run `make chart`"
    stale = [name for name, text in generated.items() if committed()[name] != text]
    assert not stale, f"{stale} differ from the generator; run `make chart`"


def test_generation_is_byte_identical_in_another_process(tmp_path):
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "components.chart", "--chart-dir", str(tmp_path)], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    assert drift(tmp_path) == []


def test_check_fails_when_the_chart_drifts(tmp_path, capsys):
    copy = tmp_path / CHART_NAME
    shutil.copytree(CHART_DIR, copy)
    assert main(["check", "--chart-dir", str(copy)]) == 0
    (copy / "templates" / "namespace.yaml").write_text("# edited by hand\n")
    (copy / "templates" / "extra.yaml").write_text("kind: ConfigMap\n")
    assert main(["check", "--chart-dir", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "differs templates/namespace.yaml" in err and "not generated templates/extra.yaml" in err


def test_chart_yaml():
    meta = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2" and meta["name"] == CHART_NAME and SEMVER.match(meta["version"])
    assert meta["kubeVersion"] == ">=1.28.0-0" and meta["appVersion"]


@pytest.mark.parametrize("operator", [False, True])
def test_one_object_per_template_named_after_its_kind(chart, stack_values, operator):
    everything = {**EVERYTHING, "monitoring": {"prometheusOperator": operator}}
    values = merged(as_values_file(stack_values["prod"]), everything)
    for name, text in chart.render(values, name="ascend-npu").items():
        docs = [d for d in yaml.safe_load_all(text) if d] if not name.endswith("NOTES.txt") else []
        assert len(docs) <= 1, name
        for doc in docs:
            file = name.rsplit("/", 1)[1]
            assert file == f"{doc['kind'].lower()}.yaml" or file.endswith(f"-{doc['kind'].lower()}.yaml"), name


def test_every_template_renders_an_object_for_some_values(chart, stack_values):
    base = merged(as_values_file(stack_values["prod"]), EVERYTHING)
    seen = set()
    for operator, release in itertools.product((False, True), known_releases("device-plugin")):
        plugin = {"release": release, "image": {"tag": release}}  # v26.1.0: a DaemonSet per chip for Docker nodes
        rendered = chart.render(merged(base, {"monitoring": {"prometheusOperator": operator}, "devicePlugin": plugin}),
                                name="ascend-npu")
        seen |= {name for name, text in rendered.items()
                 if not name.endswith("NOTES.txt") and list(filter(None, yaml.safe_load_all(text)))}
    templates = {f"{CHART_NAME}/{n}" for n in chart_files() if n.startswith("templates/") and n.endswith(".yaml")}
    assert templates <= seen


def test_optional_parts_sit_behind_their_flags():
    texts = "".join(v for n, v in chart_files().items() if n.startswith("templates/") and n.endswith(".yaml"))
    for flag in ("exporter.enabled", "monitoring.prometheusOperator", "monitoring.grafanaDashboard",
                 "runtimeClass.create", "dashboardAccess.enabled", "validation.enabled", "devicePlugin.volcano"):
        assert f"{{{{- if .Values.{flag} }}}}" in texts or f" .Values.{flag}" in texts, flag
    for chip in CHIPS:
        assert f'{{{{- if has "{chip}" .Values.devicePlugin.chips }}}}' in texts


def test_the_helpers_spell_the_builders_constants():
    helpers = HELPERS.read_text()
    resources = " ".join(f"{json.dumps(chip)} {json.dumps(name)}" for chip, name in node_labels.RESOURCE_NAMES.items())
    assert f"get (dict {resources}) ." in helpers
    assert f'"app.kubernetes.io/part-of" {json.dumps(metadata.PART_OF)}' in helpers


def test_every_template_function_has_its_helper_and_every_helper_is_prefixed():
    helpers = (CHART_DIR / "templates" / "_helpers.tpl").read_text()
    defined = set(re.findall(r'define "([^"]+)"', helpers))
    assert all(name.startswith(f"{CHART_NAME}.") for name in defined)
    modules = (metadata, node_labels, validation_job, dashboard_access)
    functions = {getattr(f, "template_helper", None) for module in modules for f in vars(module).values()} - {None}
    assert functions and functions <= defined
    used = set(re.findall(r'include "([^"]+)"', "".join(chart_files().values())))
    assert used <= defined


def test_objects_carry_the_recommended_labels(chart, stack_values):
    for obj in render(chart, as_values_file(stack_values["prod"])).values():
        carried = obj["metadata"]["labels"]
        assert carried["app.kubernetes.io/part-of"] == "ascend-npu"
        assert carried["app.kubernetes.io/managed-by"] == "Helm"
        assert {"app.kubernetes.io/name", "app.kubernetes.io/component", "app.kubernetes.io/version",
                "helm.sh/chart"} <= set(carried)
        if obj["kind"] == "DaemonSet":
            pod_labels = obj["spec"]["template"]["metadata"]["labels"]
            assert pod_labels["app.kubernetes.io/instance"] == obj["metadata"]["name"]


def test_notes_say_what_the_nodes_need_first_and_how_to_see_the_npus(chart, stack_values):
    values = merged(as_values_file(stack_values["dev"]), {"validation": {"enabled": True}})
    notes = chart.render(values, name="ascend-npu")[f"{CHART_NAME}/templates/NOTES.txt"]
    job = next(k[2] for k in render(chart, values) if k[0] == "Job")
    for needed in ("FIRST", "driver", "firmware", "CANN", "Ascend Docker Runtime", "ascend-npu.io/ready=true",
                   "pulumi up", "label each node by", "custom-columns", r"huawei\.com/Ascend910", f"logs job/{job}"):
        assert needed in notes, needed
    off = chart.render(merged(values, {"validation": {"enabled": False}}), name="ascend-npu")
    assert "validation.enabled=true" in off[f"{CHART_NAME}/templates/NOTES.txt"]


def test_every_value_the_stack_does_not_set_says_why():
    """A value without a stack setting is listed in the chart's README with its reason; every other comes from it."""
    from components.cluster.values_contract import chart_only_values
    readme = (CHART_DIR / "README.md").read_text()
    listed = re.findall(r"^\| `([^`]+)` \| `[^|]+` \| (.+) \|$", readme.partition("## Parameters")[0], re.M)
    assert listed == [(path, value.why) for path, value in chart_only_values()]
    assert all(len(why) > 30 for _, why in listed)
    assert {"monitoring.extraLabels", "monitoring.jobName", "tolerations", "validation.backoffLimit"}.isdisjoint(
        path for path, _ in listed)


def test_readme_tables_are_the_param_lines_of_values_yaml(chart):
    values_text = (CHART_DIR / "values.yaml").read_text()
    readme = (CHART_DIR / "README.md").read_text()
    params = re.findall(r"^\s*## @param (\S+) ", values_text, re.M)
    rows = re.findall(r"^\| `([^`]+)` \|", readme.partition("## Parameters")[2], re.M)
    assert rows == params and len(params) == len(set(params))
    assert re.findall(r"^## @section (.*)$", values_text, re.M) == re.findall(r"^### (.*)$", readme, re.M)
    assert "pulumi up" in readme and "ascend-npu.io/ready=true" in readme


def test_values_yaml_documents_every_value(chart):
    params = set(re.findall(r"^\s*## @param (\S+) \S", (CHART_DIR / "values.yaml").read_text(), re.M))

    def leaves(schema, path=""):
        for name, child in schema["properties"].items():
            if child.get("type") == "object" and "properties" in child:
                yield from leaves(child, f"{path}{name}.")
            else:
                yield f"{path}{name}"

    assert params == set(leaves(chart.schema))


def test_package_produces_a_loadable_archive_with_the_same_templates(tmp_path, chart):
    assert main(["package", "--chart-dir", str(tmp_path / CHART_NAME), "--dist-dir", str(tmp_path / "dist")]) == 0
    archive = tmp_path / "dist" / f"{CHART_NAME}-{chart.version}.tgz"
    with helm_python.Chart.load(archive) as packaged:
        assert packaged.metadata == chart.metadata and packaged.schema == chart.schema
        assert sorted(t["name"] for t in packaged.templates) == sorted(t["name"] for t in chart.templates)
        assert packaged.render(name="ascend-npu") == chart.render(name="ascend-npu")
