"""The drain steps' commands: what makes them run again, and that they read the same on every machine."""
from __future__ import annotations

import copy
import shlex
from collections import Counter

import yaml

from components.config import parse_stack
from components.drain.contract import CONTRACT
from components.host.drain_steps import PYTHON, REASON_ENV, drain_steps
from testkit.fakenode.packages import NEW, OLD, stack_config
from tests.stacks import ROOT, load_stack, patched, write_stack

HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


def steps(raw: dict):
    spec = parse_stack(copy.deepcopy(raw))
    return drain_steps(spec, spec.nodes[0])


def test_driver_or_firmware_move_the_reason_cann_and_the_containerd_runtime_do_not(packages):
    """CANN on the host and a containerd restart (KillMode=process) leave running containers alone."""
    old = steps(stack_config(packages, HOST_KEY, OLD)).environment[REASON_ENV]
    new = steps(stack_config(packages, HOST_KEY, NEW)).environment[REASON_ENV]
    assert old == f"driver {OLD['driver']}, firmware {OLD['firmware']}"
    assert new == f"driver {NEW['driver']}, firmware {NEW['firmware']}"


def test_on_docker_the_runtime_and_default_runtime_move_it_too(packages):
    docker = steps(stack_config(packages, HOST_KEY, OLD, runtime="docker")).environment[REASON_ENV]
    assert docker.endswith(f"docker runtime {OLD['dockerRuntime']}, default runtime runc")
    ascend = steps(stack_config(packages, HOST_KEY, OLD, runtime="docker", default_runtime=True))
    assert ascend.environment[REASON_ENV].endswith("default runtime ascend")


def test_commands_name_the_node_context_timeout_selector_and_opt_ins_and_no_path_of_this_machine(packages, tmp_path):
    drain_settings = {"timeout": 900, "podSelector": "app in (a,b)", "force": True, "gracePeriodSeconds": 120}
    raw = stack_config(packages, HOST_KEY, OLD, rollout={"drain": drain_settings})
    raw["cluster"]["kubeContext"] = "admin@prod"
    made = steps(raw)
    drain = shlex.split(made.drain)
    assert drain[:2] == ["exec", "${ASCEND_NPU_PYTHON:-.venv/bin/python}"]
    evicting = ["--timeout", "900", "--selector", "app in (a,b)", "--force", "--grace-period", "120"]
    assert drain[2:] == ["-m", "components.drain", "before-host", "--contract", str(CONTRACT), "--node", "fake-npu-01",
                         "--context", "admin@prod", *evicting]
    # The software stays when the node leaves (rollout.uninstallOnDestroy is off): its Pods are not evicted.
    assert shlex.split(made.leave)[2:] == [*drain[2:4], "leave", *drain[5:11]]
    assert shlex.split(made.uncordon)[2:] == [*drain[2:4], "after-host", *drain[5:11]]
    for command in (made.drain, made.uncordon, made.leave):
        assert str(ROOT) not in command and str(tmp_path) not in command


def test_a_node_whose_software_goes_when_it_leaves_is_drained_first(packages):
    made = steps(stack_config(packages, HOST_KEY, OLD, uninstall=True, rollout={"drain": {"deleteEmptyDirData": True}}))
    assert shlex.split(made.leave)[2:] == ["-m", "components.drain", "leave", "--contract", str(CONTRACT), "--node",
                                           "fake-npu-01", "--evict", "--timeout", "600", "--delete-emptydir-data"]


def test_the_default_python_is_the_virtualenv_pulumi_yaml_names():
    venv = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"]["virtualenv"]
    assert PYTHON == f'"${{ASCEND_NPU_PYTHON:-{venv}/bin/python}}"'


def test_with_drain_off_a_node_has_no_drain_steps(tmp_path):
    from tests.conftest import run_stack_file
    path = write_stack(patched(load_stack("dev"), {"set": {"ascend-npu:rollout.drain": {"enabled": False}}}),
                       tmp_path, "dev")
    resources = run_stack_file(path, "dev")
    # The host steps and the label steps are local commands too; the drain's are those that run components.drain.
    drains = [r for r in resources
              if r.type == "command:local:Command" and "components.drain" in r.properties["create"]]
    assert Counter(r.name.rsplit("-", 1)[-1] for r in drains) == Counter()
    on = Counter(r.name.rsplit("-", 1)[-1] for r in run_stack_file(ROOT / "Pulumi.dev.yaml", "dev")
                 if r.type == "command:local:Command" and "components.drain" in r.properties["create"])
    assert on == Counter({"drain": 2, "uncordon": 2})
