"""A site registry and pull secret: dev and prod planned with them pull every image from the site registry, path, tag
and digest kept, and every Pod names the Secret; a login is a Pulumi secret from the stack file to the plan record;
the stack states its registries, and allowed-registries refuses a workload that pulls from elsewhere."""
from __future__ import annotations

import base64
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Iterator

import pytest

from components.cluster.component import docker_config, stated_registries
from components.cluster.values_contract import chart_values
from components.config import SpecError
from components.config.config_source import UNREAD_SECRET, spec_from_values
from components.config.registry import CREATED_SECRET, rewritten
from components.plan.recorder import SECRET_SIG, SIG_KEY
from components.plan.stack_files import SECRET_PLACEHOLDER
from components.plan.stack_plan import EXIT_OK, EXIT_POLICY, plan
from tests.stacks import load_stack, patched, seal, write_stack

SITE = "registry.site.example:5000"
SECRET_KINDS = ("kubernetes:core/v1:Secret",)


def planned(stack: dict, tmp_path: Path, name: str) -> list[dict[str, Any]]:
    """The resources.json of a stack file planned offline."""
    return judged(stack, tmp_path, name)[0]


def judged(stack: dict, tmp_path: Path, name: str, extra: Path | None = None, exit_code: int = EXIT_OK
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The resources.json and the policy violations of a stack file planned offline, with any extra resources."""
    out = tmp_path / name
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert plan("case", out, write_stack(stack, tmp_path, name), extra=extra) == exit_code, err.getvalue()
    report = json.loads((out / "policy-report.json").read_text())
    return json.loads((out / "resources.json").read_text()), report["violations"]


def images(value: Any) -> Iterator[str]:
    """Every `image:` anywhere in a resource's inputs, whatever object holds it."""
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "image" and isinstance(child, str):
                yield child
            else:
                yield from images(child)
    elif isinstance(value, list):
        for child in value:
            yield from images(child)


def pod_specs(resources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Resource name -> Pod spec, for every resource that holds a Pod template."""
    found = {}
    for r in resources:
        template = ((r["inputs"].get("spec") or {}).get("template") or {}).get("spec")
        if template is not None:
            found[r["name"]] = template
    return found


def with_site(stack: str, images_section: dict, login: str | None = None) -> dict:
    """The committed stack with the `images` section, and a login sealed as `pulumi config set --secret` does."""
    base = load_stack(stack)
    extra: dict[str, Any] = {"ascend-npu:images": images_section}
    if login is not None:
        salt = base.get("encryptionsalt")
        sealed = seal(login, salt) if salt else base64.b64encode(b"cloud-kms:" + login.encode()).decode()
        extra["ascend-npu:registryCredentials"] = {"secure": sealed}
    return patched(base, {"set": extra})


def site_reference(reference: str) -> str:
    """A reference as written, with its registry part replaced by the site registry."""
    return rewritten(reference, SITE)


CLUSTER_TYPE, RULE = "ascend-npu:index:AscendCluster", "allowed-registries"
# A workload of the stack still pulling from the registry its images were written with.
ELSEWHERE = {"type": "kubernetes:apps/v1:Deployment", "name": "inference", "properties": {
    "metadata": {"name": "inference", "namespace": "ml"},
    "spec": {"selector": {"matchLabels": {"app": "inference"}}, "template": {
        "metadata": {"labels": {"app": "inference"}},
        "spec": {"containers": [{"name": "server", "image": "registry.prod.corp.example/ml/server:3.1.0"}]}}}}}


def stated(resources: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The AscendCluster's inputs and outputs."""
    [cluster] = [r for r in resources if r["type"] == CLUSTER_TYPE]
    return cluster["inputs"], cluster.get("outputs", {})


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_image_comes_from_the_site_registry_and_every_pod_names_the_secret(stack, tmp_path):
    before = planned(load_stack(stack), tmp_path, "before")
    after, violations = judged(with_site(stack, {"registry": SITE, "pullSecret": "site-pull"}), tmp_path, "after")
    written = sorted(i for r in before for i in images(r["inputs"]))
    pulled = sorted(i for r in after for i in images(r["inputs"]))
    assert len(pulled) == len(written) >= 3  # device plugin, exporter and a validation Job at least
    assert pulled == sorted(site_reference(i) for i in written)
    assert all(i.startswith(SITE + "/") for i in pulled)
    specs = pod_specs(after)
    assert len(specs) == len(pulled)  # one container each: no Pod template without an image counted
    assert {name: spec.get("imagePullSecrets") for name, spec in specs.items()} == \
        {name: [{"name": "site-pull"}] for name in specs}
    assert not [r for r in after if r["type"] in SECRET_KINDS and r["inputs"].get("type", "").endswith("json")]
    inputs, outputs = stated(after)
    assert inputs == {"images": {"registry": SITE, "registries": [SITE]}}
    assert outputs["images"] == inputs["images"]  # what the engine hands a stack policy: the component's outputs
    assert [v for v in violations if v["policy"] == RULE] == []  # allowed-registries passes the stack


def test_the_prod_example_pulls_everything_from_its_site_registry_with_its_secret(tmp_path):
    resources = planned(load_stack("prod"), tmp_path, "prod")
    pulled = [i for r in resources for i in images(r["inputs"])]
    assert len(pulled) >= 6 and all(i.startswith("registry.prod.corp.example/") and "@sha256:" in i for i in pulled)
    specs = pod_specs(resources)
    assert all(spec["imagePullSecrets"] == [{"name": "prod-registry-pull"}] for spec in specs.values())
    assert stated(resources)[1]["images"]["registries"] == ["registry.prod.corp.example"]


def test_without_the_section_nothing_changes(tmp_path):
    before = planned(patched(load_stack("prod"), {"unset": ["ascend-npu:images"]}), tmp_path, "before")
    assert all("imagePullSecrets" not in spec for spec in pod_specs(before).values())
    assert any(i.startswith("registry.prod.corp.example/") for r in before for i in images(r["inputs"]))
    inputs, outputs = stated(before)  # no registries stated for allowed-registries either
    assert inputs == {} and "images" not in outputs


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_login_becomes_one_secret_in_the_namespace_whose_data_stays_secret(stack, tmp_path):
    resources = planned(with_site(stack, {"registry": SITE}, "deploy:S1te-pw"), tmp_path, "login")
    [secret] = [r for r in resources if r["type"] in SECRET_KINDS and r["inputs"]["metadata"]["name"] == CREATED_SECRET]
    assert secret["inputs"]["type"] == "kubernetes.io/dockerconfigjson"
    assert secret["inputs"]["metadata"]["namespace"] == load_stack(stack)["config"]["ascend-npu:cluster"]["namespace"]
    assert secret["inputs"]["data"] == "[secret]"
    specs = pod_specs(resources)
    assert specs and all(spec["imagePullSecrets"] == [{"name": CREATED_SECRET}] for spec in specs.values())
    workloads = [r for r in resources if r["name"] in specs]
    assert all(secret["urn"] in r["dependencies"] for r in workloads)  # the Secret exists before any Pod pulls
    text = json.dumps(resources)
    assert "S1te-pw" not in text and base64.b64encode(b"deploy:S1te-pw").decode() not in text


def test_the_login_is_a_secret_on_the_wire(tmp_path):
    from components.plan.stack_plan import load_config, run_stack
    config = load_config("case", write_stack(with_site("dev", {"registry": SITE}, "deploy:pw"), tmp_path))
    recorded = run_stack(config)
    [secret] = [r for r in recorded if r.type in SECRET_KINDS and "dockerconfigjson" in json.dumps(r.properties)]
    assert secret.properties["data"][SIG_KEY] == SECRET_SIG


def test_an_image_of_its_own_registry_wins_over_the_site_registry(tmp_path):
    stack = with_site("prod", {"registry": SITE})
    stack = patched(stack, {"set": {"ascend-npu:validation.images.310P.registry": "cann.mirror.example"}})
    resources, violations = judged(stack, tmp_path, "own")
    pulled = [i for r in resources for i in images(r["inputs"])]
    cann = [i for i in pulled if "/ascend/cann:" in i]
    assert sorted(i.split("/")[0] for i in cann) == ["cann.mirror.example", SITE]
    assert all(i.startswith(SITE + "/") for i in pulled if "/ascend/cann:" not in i)
    assert stated(resources)[0]["images"]["registries"] == ["cann.mirror.example", SITE]  # stated, so allowed
    assert [v for v in violations if v["policy"] == RULE] == []


@pytest.mark.parametrize("repository, expected", [
    ("swr.cn-south-1.myhuaweicloud.com/ascendhub/npu-exporter", f"{SITE}/ascendhub/npu-exporter"),
    ("registry.prod.corp.example/ascend/cann", f"{SITE}/ascend/cann"),
    ("localhost/ascend/cann", f"{SITE}/ascend/cann"),
    ("10.0.0.5:5000/cann", f"{SITE}/cann"),
    ("ascendhub/npu-exporter", f"{SITE}/ascendhub/npu-exporter"),  # Docker Hub: no registry part, path kept
    ("ubuntu", f"{SITE}/ubuntu"),
])
def test_the_registry_part_is_replaced_and_the_path_kept(repository, expected):
    assert rewritten(repository, SITE) == expected
    assert rewritten(repository, None) == repository


def test_the_secret_holds_the_login_for_the_site_registry_only():
    config = json.loads(base64.b64decode(docker_config(SITE, "robot$ci:p@ss:word")))
    assert config == {"auths": {SITE: {"username": "robot$ci", "password": "p@ss:word",
                                       "auth": base64.b64encode(b"robot$ci:p@ss:word").decode()}}}


def engine_values(login: str) -> dict[str, str]:
    """dev's config as the engine hands it to the program: the login decrypted, its key listed as secret."""
    config = load_stack("dev")["config"]
    values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    return {**values, "ascend-npu:images": json.dumps({"registry": SITE}), "ascend-npu:registryCredentials": login}


@pytest.mark.parametrize("login", ["no-colon-t0ken", ":only-a-password", "deploy-only:", "de ploy:pw"])
def test_a_secret_login_not_of_the_form_user_password_is_refused_without_showing_it(login):
    with pytest.raises(SpecError) as caught:
        spec_from_values(engine_values(login), ["ascend-npu:registryCredentials"])
    [problem] = caught.value.problems
    assert problem.field == "registryCredentials" and "user:password" in problem.message
    assert login not in str(caught.value)


def test_a_secret_login_of_the_form_user_password_is_taken():
    spec = spec_from_values(engine_values("robot$ci:p@ss word"), ["ascend-npu:registryCredentials"])
    assert spec.registry_credentials == "robot$ci:p@ss word" and spec.images.registry == SITE


def test_the_plans_stand_in_for_an_unread_secret_is_not_judged_as_a_login():
    assert UNREAD_SECRET == SECRET_PLACEHOLDER


def test_an_image_from_another_registry_is_reported_by_allowed_registries(tmp_path):
    extra = tmp_path / "elsewhere.yaml"
    extra.write_text(json.dumps(ELSEWHERE))
    _, violations = judged(with_site("prod", {"registry": SITE}), tmp_path, "elsewhere", extra, EXIT_POLICY)
    [violation] = [v for v in violations if v["enforcementLevel"] == "mandatory"]
    assert violation["policy"] == RULE
    assert ("Deployment 'ml/inference' containers[0] (server): image 'registry.prod.corp.example/ml/server:3.1.0' "
            f"comes from registry.prod.corp.example, not a registry the stack allows ({SITE})") in violation["message"]
    # The same workload in the stack without images.registry: nothing is stated, nothing reported.
    _, violations = judged(load_stack("prod"), tmp_path, "unstated", extra)
    assert [v for v in violations if v["policy"] == RULE] == []


@pytest.mark.parametrize("validation, expected", [
    (True, ["cann.mirror.example", "plugin.mirror.example", SITE]),
    (False, ["plugin.mirror.example", SITE]),
])
def test_only_the_images_the_stack_deploys_state_their_own_registry(validation, expected):
    config = load_stack("dev")["config"]
    cann = {**config["ascend-npu:validation"]["images"]["910B"], "registry": "cann.mirror.example"}
    sections = {"ascend-npu:images": {"registry": SITE},
                "ascend-npu:devicePlugin": {"image": {"repository": "ascendhub/ascend-k8sdeviceplugin", "tag": "v6.0.0",
                                                      "registry": "plugin.mirror.example"}},
                "ascend-npu:exporter": {"enabled": False, "image": {"repository": "ascendhub/npu-exporter",
                                                                    "tag": "v6.0.0", "registry": "off.mirror.example"}},
                "ascend-npu:validation": {"enabled": validation, "images": {"910B": cann}}}
    values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in {**config, **sections}.items()}
    spec = spec_from_values(values, [])
    assert stated_registries(chart_values(spec)) == {"images": {"registry": SITE, "registries": expected}}
    assert stated_registries(chart_values(spec_from_values({**values, "ascend-npu:images": "{}"}, []))) is None
