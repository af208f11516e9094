"""The workflows run every stack the repository has, on a runner the project can point at a private cluster."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from engine.cache import BIN
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


def test_the_workflows_leave_the_examples_out_and_take_a_copy_made_as_the_docs_say(tmp_path):
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    recipe = re.search(r"^(sed -i '1.*?) Pulumi\.lab\.yaml", (ROOT / "docs" / "stack-config.md").read_text(),
                       re.MULTILINE).group(1)
    shutil.copy(ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.lab.yaml")
    subprocess.run(["bash", "-c", f"{recipe} Pulumi.lab.yaml"], cwd=tmp_path, check=True)
    deployed = subprocess.run(["bash", str(ROOT / ".ci" / "stacks"), str(tmp_path), "--deployed"], capture_output=True,
                              text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    assert json.loads(deployed.stdout) == ["lab"]
    assert "stacks: dev left out: Pulumi.dev.yaml is an example" in deployed.stderr
    assert "stacks: prod left out" in deployed.stderr
    asked = subprocess.run(["bash", str(ROOT / ".ci" / "stacks"), str(tmp_path), "--deployed"], capture_output=True,
                           text=True, check=True, env={"PATH": "/usr/bin:/bin", "ASCEND_NPU_EXAMPLE_STACKS": "true"})
    assert json.loads(asked.stdout) == ["dev", "lab", "prod"] == stacks(tmp_path)


@pytest.mark.parametrize("name, job", [("preview.yml", "preview"), ("up.yml", "up")])
def test_matrices_come_from_the_stack_files_and_the_runner_from_a_variable(name, job):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    listed = workflow["jobs"]["stacks"]
    assert "bash .ci/stacks --deployed" in listed["steps"][-1]["run"]
    assert listed["steps"][-1]["env"]["ASCEND_NPU_EXAMPLE_STACKS"] == "${{ vars.ASCEND_NPU_EXAMPLE_STACKS }}"
    runs = workflow["jobs"][job]
    assert runs["needs"] == "stacks" and runs["if"] == "needs.stacks.outputs.stacks != '[]'"
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


@pytest.mark.parametrize("name", sorted(p.name for p in WORKFLOWS.glob("*.yml")))
def test_no_job_can_wait_for_githubs_six_hours_default(name):
    for job_name, job in yaml.safe_load((WORKFLOWS / name).read_text())["jobs"].items():
        limit = job.get("timeout-minutes")
        assert limit is not None, f"{name}: job {job_name} has no timeout-minutes"
        default = re.search(r"\|\| '(\d+)'", limit).group(1) if isinstance(limit, str) else limit
        assert 0 < int(default) <= 360, (name, job_name, limit)


def test_previews_skip_the_per_step_checkpoints_and_ups_keep_them():
    """A preview's checkpoints are pure cost (quadratic in resources: bench/real_engine.py); an `up`'s are what an
    interrupted one is recovered from (docs/day-2.md), so it keeps them."""
    for name, wanted in (("preview.yml", "true"), ("up.yml", None)):
        steps = [s for job in yaml.safe_load((WORKFLOWS / name).read_text())["jobs"].values() for s in job["steps"]
                 if s.get("uses", "").startswith("pulumi/actions")]
        assert steps and all(s["env"].get("PULUMI_SKIP_CHECKPOINTS") == wanted for s in steps), name


@pytest.mark.parametrize("name", ["preview.yml", "up.yml"])
def test_the_pulumi_steps_get_the_stacks_passphrase(name):
    steps = [s for job in yaml.safe_load((WORKFLOWS / name).read_text())["jobs"].values() for s in job["steps"]
             if s.get("uses", "").startswith("pulumi/actions")]
    assert steps and all(s["env"]["PULUMI_CONFIG_PASSPHRASE"] == "${{ secrets.PULUMI_CONFIG_PASSPHRASE }}"
                         for s in steps)
    assert all("SSH_AUTH_SOCK" not in s["env"] for s in steps)  # set by the key step, only for an agent stack


def key_step(tmp_path, deploy_key: str) -> tuple[str, str]:
    """up.yml's key step run as the runner runs it; what it wrote to GITHUB_ENV, and the keys its agent holds."""
    job = yaml.safe_load((WORKFLOWS / "up.yml").read_text())["jobs"]["up"]
    step = next(s for s in job["steps"] if "SSH_DEPLOY_KEY" in s.get("env", {}))
    env_file = tmp_path / "github_env"
    env_file.touch()
    env = {"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(env_file),
           "KUBECONFIG_DATA": "apiVersion: v1", "SSH_DEPLOY_KEY": deploy_key}
    done = subprocess.run(["bash", "-e", "-c", step["run"] + '\necho "agent=${SSH_AGENT_PID:-}"'], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    pid = done.stdout.strip().rsplit("agent=", 1)[1]
    held = ""
    if pid:
        agent = {"SSH_AUTH_SOCK": str(tmp_path / "agent.sock"), "PATH": "/usr/bin:/bin"}
        held = subprocess.run(["ssh-add", "-l"], env=agent, capture_output=True, text=True).stdout
        subprocess.run(["kill", pid], check=True)
    assert (tmp_path / "kubeconfig").read_text() == "apiVersion: v1"
    return env_file.read_text(), held


@pytest.mark.skipif(shutil.which("ssh-agent") is None, reason="openssh-client is not installed")
def test_up_starts_an_agent_only_for_a_stack_whose_key_comes_from_one(tmp_path):
    assert key_step(tmp_path, "") == ("", "")  # sshPrivateKey stacks: no agent for the program to refuse
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "deploy", "-f", str(tmp_path / "k")],
                   check=True)
    written, held = key_step(tmp_path, (tmp_path / "k").read_text())
    assert written == f"SSH_AUTH_SOCK={tmp_path}/agent.sock\n" and "deploy (ED25519)" in held


ACTIONLINT = BIN / "actionlint"


@pytest.mark.skipif(not ACTIONLINT.exists(), reason="actionlint is built by make engine (.ci/run runs make actionlint)")
def test_actionlint_finds_nothing_in_the_workflows_and_does_find_a_broken_one(tmp_path):
    clean = subprocess.run([str(ACTIONLINT), "-no-color", "-oneline"], cwd=ROOT, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    broken = tmp_path / ".github" / "workflows"
    broken.mkdir(parents=True)
    text = (WORKFLOWS / "up.yml").read_text().replace("timeout-minutes:", "timeout-minute:", 1)
    (broken / "up.yml").write_text(text)
    found = subprocess.run([str(ACTIONLINT), "-no-color", "-oneline", str(broken / "up.yml")], capture_output=True,
                           text=True)
    assert found.returncode == 1 and 'unexpected key "timeout-minute"' in found.stdout, found.stdout


EXPRESSION = re.compile(r"\$\{\{\s*(secrets|vars|runner)\.([A-Za-z_]+)\s*\}\}")


def run_steps(name: str, tmp_path, secrets: dict[str, str], variables: dict[str, str]) -> list[tuple[str, str]]:
    """Each job's `run:` steps in the order the workflow runs them, as a runner would (bash -e, the step's env with
    its secrets and variables, GITHUB_OUTPUT, GITHUB_ENV, RUNNER_TEMP); a step that `uses:` an action is listed as
    not run here. Returns (job, what happened) per step."""
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    values = {"secrets": secrets, "vars": variables, "runner": {"temp": str(tmp_path)}}
    ran = []
    for job_name, job in workflow["jobs"].items():
        for step in job["steps"]:
            if "run" not in step:
                ran.append((job_name, f"uses {step['uses'].split('@')[0]}"))
                continue
            env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path), "RUNNER_TEMP": str(tmp_path),
                   "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_ENV": str(tmp_path / "env")}
            for key, value in (step.get("env") or {}).items():
                env[key] = EXPRESSION.sub(lambda m: values[m[1]].get(m[2], ""), str(value))
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, (name, job_name, step.get("name"), done.stderr)
            ran.append((job_name, f"ran {step['run'].strip().splitlines()[0]}"))
    return ran


def stack_files(examples: bool) -> str:
    """The workflows' `stacks` output for this clone's stack files: the users' own, and the examples with EXAMPLES
    (a file whose first line is the example mark), whatever stack files a user has added beside them."""
    names = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml")
                   if examples or not p.read_text().startswith("# ascend-npu: example stack"))
    return "stacks=" + json.dumps(names, separators=(",", ":")) + "\n"


@pytest.mark.parametrize("name", ["preview.yml", "up.yml"])
def test_every_step_that_can_run_here_runs_in_the_workflows_order(name, tmp_path):
    ran = run_steps(name, tmp_path, {"KUBECONFIG": "apiVersion: v1"}, {})
    assert (tmp_path / "output").read_text() == stack_files(examples=False)  # the examples left out unless asked
    job = "preview" if name == "preview.yml" else "up"
    wanted = [("stacks", "uses actions/checkout"), ("stacks", 'ran echo "stacks=$(bash .ci/stacks --deployed)'),
              (job, "uses actions/checkout"), (job, "uses actions/setup-python"), (job, "ran make venv"),
              (job, "ran install -m 600 /dev/null"), (job, "uses pulumi/actions")]
    assert len(ran) == len(wanted) and all(j == wj and what.startswith(w) for (j, what), (wj, w) in zip(ran, wanted)), \
        ran
    assert (tmp_path / "kubeconfig").read_text() == "apiVersion: v1"
    assert not (tmp_path / "env").exists() or "SSH_AUTH_SOCK" not in (tmp_path / "env").read_text()
    (tmp_path / "output").unlink()
    run_steps(name, tmp_path, {"KUBECONFIG": "apiVersion: v1"}, {"ASCEND_NPU_EXAMPLE_STACKS": "true"})
    assert (tmp_path / "output").read_text() == stack_files(examples=True)
