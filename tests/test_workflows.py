"""The workflows run every stack the repository has, on a runner the project can point at a private cluster."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from tests.stacks import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def stacks(directory) -> list[str]:
    done = subprocess.run(["bash", str(ROOT / ".ci" / "stacks"), str(directory)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_the_stack_list_is_the_stack_files(tmp_path):
    assert stacks(ROOT) == sorted(p.name[len("Pulumi."):-len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.lab-2.yaml")
    assert stacks(tmp_path) == ["dev", "lab-2", "prod"]
    (tmp_path / "Pulumi.dev.yaml").unlink()
    assert stacks(tmp_path) == ["lab-2", "prod"]


@pytest.mark.parametrize("name, job", [("preview.yml", "preview"), ("up.yml", "up")])
def test_matrices_come_from_the_stack_files_and_the_runner_from_a_variable(name, job):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    listed = workflow["jobs"]["stacks"]
    assert "bash .ci/stacks" in listed["steps"][-1]["run"]
    runs = workflow["jobs"][job]
    assert runs["needs"] == "stacks"
    assert runs["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    assert "vars.ASCEND_NPU_RUNNER" in runs["runs-on"] and "ubuntu-24.04" in runs["runs-on"]
    assert "[dev, prod]" not in (WORKFLOWS / name).read_text()


def test_the_offline_plan_of_every_stack_reads_the_same_list():
    steps = yaml.safe_load((WORKFLOWS / "test.yml").read_text())["jobs"]["test"]["steps"]
    plan = next(s["run"] for s in steps if "make plan" in s.get("run", ""))
    done = subprocess.run(["bash", "-c", plan.replace("make plan", "echo")], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == [f"STACK={s}" for s in stacks(ROOT)]


def test_the_test_workflow_runs_ci_with_go_and_the_engine_cache_it_builds_into():
    """The same `.ci/run` CI runs, with the Go the engine's modules ask for and the cache make engine builds into."""
    job = yaml.safe_load((WORKFLOWS / "test.yml").read_text())["jobs"]["test"]
    steps = {step.get("uses", "").split("@")[0] or step["name"]: step for step in job["steps"]}
    wanted_go = re.search(r"\\n\\ngo (\d+\.\d+)\\n", (ROOT / "engine" / "build.sh").read_text()).group(1)
    assert str(steps["actions/setup-go"]["with"]["go-version"]) == wanted_go
    engine_dir = job["env"]["ENGINE_DIR"]
    assert not engine_dir.startswith("${{ github.workspace")  # outside the clone, as make engine builds
    cache = steps["actions/cache"]["with"]
    assert cache["path"].splitlines() == ["${{ env.ENGINE_DIR }}/builds", "${{ env.ENGINE_DIR }}/sets"]
    assert "hashFiles('engine/versions.sh')" in cache["key"]
    run = next(step["run"] for step in job["steps"] if ".ci/run" in step.get("run", ""))
    assert run.startswith("sudo ") and "ENGINE_DIR" in run.split("--preserve-env=")[1].split()[0]
    assert run.endswith("bash .ci/run")
    assert 0 < job["timeout-minutes"] <= 90
