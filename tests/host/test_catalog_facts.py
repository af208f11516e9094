"""The release catalog's facts as the install and verify scripts look them up (catalog_facts.py, catalog.sh), run by
bash exactly as the staged script holds them: for every chip, architecture, engine and catalogued release (and a
release the catalog does not list), each equals what parameters.py derives for that node, and no command carries
one."""
from __future__ import annotations

import dataclasses
import shlex
import subprocess

import pytest

from components.config.config_source import raw_config
from components.config.hosts import Arch, Chip, ContainerRuntime
from components.config.packages import Kind, declared_version
from components.config.stack import parse_stack
from components.host.catalog_facts import render
from components.host.commands import DEFAULT_STAGING, _inputs, host_steps
from components.host.parameters import PARAMETERS, step_names
from components.host.script_set import script_text
from components.plan.stack_files import read_stack_config
from components.releases.catalog import component_releases
from tests.stacks import ROOT

FACTS = [param for param in PARAMETERS if param.by is not None]
RELEASES = {"driver": "npu-driver", "firmware": "npu-firmware", "cann": "cann"}


def prod_spec():
    return parse_stack(raw_config(read_stack_config(ROOT, "prod").values), private_key="[secret]")


def staged_without_its_run(step: str) -> str:
    """The step's script as staged, but for its last line, the one that runs the step."""
    body, last = script_text(step).rstrip("\n").rsplit("\n", 1)
    assert last in ("main </dev/null", "start")
    return body + "\n"


def looked_up(step: str, given: dict[str, str]) -> dict[str, str]:
    """What catalog_facts exports for STEP with the parameters GIVEN, as the staged script runs it."""
    names = [p.name for p in FACTS if p.name in step_names(step)]
    shown = "".join(f"printf '%s=%s\\n' {name} \"${{{name}}}\"\n" for name in names)
    done = subprocess.run(["bash", "-c", staged_without_its_run(step) + "catalog_facts\n" + shown],
                          env={"PATH": "/usr/bin:/bin", **given}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def variants():
    spec = prod_spec()
    node = spec.nodes[0]
    versions = [spec.versions]
    for key, catalog in RELEASES.items():
        versions += [spec.versions.model_copy(update={key: release}) for release in component_releases(catalog)]
        versions.append(spec.versions.model_copy(update={key: "99.9.RC9"}))  # not catalogued: the newest's flags
    versions += [spec.versions.model_copy(update={"docker_runtime": release})
                 for release in component_releases("docker-runtime")]
    for version in versions:
        for chip in Chip:
            for arch in Arch:
                for engine in ContainerRuntime:
                    changed = dataclasses.replace(node, chip=chip, arch=arch, container_runtime=engine)
                    yield dataclasses.replace(spec, versions=version), changed


@pytest.mark.parametrize("step", ["install", "verify"])
def test_every_fact_the_script_looks_up_is_what_parameters_py_derives(step):
    checked = 0
    seen: set[tuple] = set()
    for spec, node in variants():
        inputs = _inputs(spec, node, DEFAULT_STAGING)
        given = {p.name: str(p.derive(inputs)) for p in PARAMETERS
                 if any(p.name in (f.by or ()) for f in FACTS)}
        key = tuple(sorted(given.items()))
        if key in seen:
            continue
        seen.add(key)
        wanted = {p.name: str(p.derive(inputs)) for p in FACTS if p.name in step_names(step)}
        assert looked_up(step, given) == wanted, given
        checked += 1
    assert checked > 50


def test_no_command_carries_a_catalog_fact_and_the_scripts_hold_them():
    spec = prod_spec()
    steps = host_steps(spec, spec.nodes[0])
    words = {name: shlex.split(step.create) for name, step in steps.items()}
    for param in FACTS:
        assert not any(word.startswith(f"{param.name}=") for found in words.values() for word in found), param.name
    assert "declare -A CATALOG=(" in render("install") and render("uninstall") == ""
    assert "ASCEND_DOCKER_RUNTIME_RECORD" in render("verify")


def test_a_release_the_catalog_lacks_stops_the_step_naming_it():
    spec = prod_spec()
    inputs = _inputs(spec, spec.nodes[0], DEFAULT_STAGING)
    given = {p.name: str(p.derive(inputs)) for p in PARAMETERS if p.name.endswith("_VERSION") or p.name in
             ("ASCEND_ENGINE", "ASCEND_CHIP", "ASCEND_ARCH")}
    given["ASCEND_DOCKER_RUNTIME_VERSION"] = "v0.0.1"
    program = staged_without_its_run("verify") + "catalog_facts\n"
    done = subprocess.run(["bash", "-c", program], env={"PATH": "/usr/bin:/bin", **given}, capture_output=True,
                          text=True)
    assert done.returncode != 0
    assert "the release catalog has no ASCEND_DOCKER_RUNTIME_RECORD for v0.0.1 (components/releases)" in done.stderr
    assert declared_version(spec.versions, Kind.DOCKER_RUNTIME) != "v0.0.1"
