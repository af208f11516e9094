"""A site registry with a project path (Harbor, Artifactory, Nexus, Quay): `images.registry: harbor.lab.example/ascend`
puts every image under the project, its own path kept, the same in the Pulumi objects, the chart, the bundle's
images.txt and the allowed-registries rule, which allows that project and not the whole host."""
from __future__ import annotations

import base64
import json

import pytest
import yaml

from components.chart.template import render_stack
from components.cluster.component import docker_config
from components.config.registry import rewritten
from tests.stacks import load_stack, patched, write_stack
from tests.test_bundle import manifest_of, run_bundle
from tests.test_site_registry import ELSEWHERE, RULE, images, judged, stated, with_site

PROJECT = "harbor.lab.example/ascend"


@pytest.mark.parametrize("repository, expected", [
    ("swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter", f"{PROJECT}/ascendhub/npu-exporter"),
    ("registry.prod.corp.example/ascend/cann", f"{PROJECT}/ascend/cann"),
    ("ascendhub/npu-exporter", f"{PROJECT}/ascendhub/npu-exporter"),
    ("ubuntu", f"{PROJECT}/ubuntu"),
    (f"{PROJECT}/ascendhub/npu-exporter", f"{PROJECT}/ascendhub/npu-exporter"),  # already under it: as written
    ("harbor.lab.example/ascend-dev/npu-exporter", f"{PROJECT}/ascend-dev/npu-exporter"),  # another project
])
def test_each_image_goes_under_the_project_with_its_path(repository, expected):
    assert rewritten(repository, PROJECT) == expected


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_objects_and_the_chart_pull_the_same_images_under_the_project(stack, tmp_path):
    before, _ = judged(load_stack(stack), tmp_path, "before")
    config = with_site(stack, {"registry": PROJECT})
    after, violations = judged(config, tmp_path, "after")
    written = sorted(i for r in before for i in images(r["inputs"]))
    pulled = sorted(i for r in after for i in images(r["inputs"]))
    assert pulled == sorted(rewritten(i, PROJECT) for i in written) and all(i.startswith(f"{PROJECT}/") for i in pulled)
    assert stated(after)[0] == {"images": {"registry": PROJECT, "registries": [PROJECT]}}
    assert [v for v in violations if v["policy"] == RULE] == []
    assert render_stack("case", tmp_path / "chart", write_stack(config, tmp_path, "chart")) == 0
    docs = [d for d in yaml.safe_load_all((tmp_path / "chart" / "manifests.yaml").read_text()) if d]
    assert sorted(i for d in docs for i in images(d)) == pulled


def test_the_rule_allows_the_project_not_the_whole_host(tmp_path):
    other = {**ELSEWHERE, "properties": json.loads(json.dumps(ELSEWHERE["properties"]).replace(
        "registry.prod.corp.example/ml/server", "harbor.lab.example/library/server"))}
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump([other]))
    _, violations = judged(with_site("dev", {"registry": PROJECT}), tmp_path, "other", extra=extra, exit_code=1)
    [violation] = [v for v in violations if v["policy"] == RULE]
    assert "image 'harbor.lab.example/library/server:3.1.0' comes from harbor.lab.example, not a registry or " \
           f"registry project the stack allows ({PROJECT})" in violation["message"]


def test_the_bundle_carries_every_image_to_its_place_under_the_project(tmp_path):
    manifest = manifest_of(with_site("dev", {"registry": PROJECT}), tmp_path, "harbor")
    assert manifest["registry"] == PROJECT and manifest["images"] and all(i["carried"] for i in manifest["images"])
    lines = (tmp_path / "harbor-bundle" / "images.txt").read_text().splitlines()
    for line, image in zip(lines, manifest["images"]):
        source, target, archive = line.split()
        assert target.startswith(f"{PROJECT}/") and target == image["target"] and archive == image["archive"]
        assert target.split("@")[0].removeprefix(f"{PROJECT}/").split(":")[0] == \
            source.split("@")[0].split("/", 1)[1].split(":")[0]


def test_an_image_written_under_the_project_already_is_pulled_as_written_and_not_carried(tmp_path):
    repository = f"{PROJECT}/ascendhub/npu-exporter"
    config = patched(with_site("dev", {"registry": PROJECT}),
                     {"set": {"ascend-npu:exporter": {"image": {"repository": repository, "tag": "v6.0.0"}}}})
    manifest = manifest_of(config, tmp_path, "written")
    [exporter] = [i for i in manifest["images"] if i["name"] == "exporter"]
    assert exporter["target"] == f"{repository}:v6.0.0" and not exporter["carried"]


def test_the_pull_secret_holds_the_login_for_the_project():
    """kubelet matches a dockerconfigjson key `host/path` against the images under that path (kubernetes
    pkg/credentialprovider/keyring.go, BasicDockerKeyring.Add)."""
    config = json.loads(base64.b64decode(docker_config(PROJECT, "robot$ascend:pw")))
    assert list(config["auths"]) == [PROJECT]


def test_plan_and_bundle_warn_of_each_site_image_without_a_digest(tmp_path, capsys):
    from components.plan.stack_plan import plan
    assert plan("case", tmp_path / "plan", write_stack(with_site("dev", {"registry": PROJECT}), tmp_path, "tags")) == 0
    [warning] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warning.startswith("warning: 3 image(s) of the site registry have no digest")
    assert f"devicePlugin.image.digest ({PROJECT}/ascendhub/ascend-k8sdeviceplugin:v6.0.0)" in warning
    assert "validation.images.910B.digest (" in warning and "(docs/air-gapped.md)" in warning
    stack_file = write_stack(with_site("dev", {"registry": PROJECT}), tmp_path, "bundled")
    code, _, err = run_bundle("--stack", "case", "--stack-file", str(stack_file), "--out", str(tmp_path / "bundle"))
    assert code == 0 and "warning: 3 image(s) of the site registry have no digest" in err


@pytest.mark.parametrize("stack, site", [("prod", None), ("dev", None)], ids=["prod-all-pinned", "no-site-registry"])
def test_no_warning_where_every_site_image_has_its_digest_or_there_is_no_site(stack, site, tmp_path, capsys):
    from components.plan.stack_plan import plan
    config = with_site(stack, {"registry": site}) if site else load_stack(stack)
    assert plan("case", tmp_path, write_stack(config, tmp_path, stack), quiet=True) == 0
    assert "warning:" not in capsys.readouterr().err
