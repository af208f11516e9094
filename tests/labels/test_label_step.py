"""The label step (components/labels): what the state stores reads back as the same call, an apply owns its labels
under a field manager of its own that its updates and its release reuse, and a node the cluster lacks fails it.

Simulated: the API server, as a recorder of the requests the step makes (how the real server merges and releases
what two field managers set is end to end: tests/e2e/test_release_upgrade.py, test_day2.py)."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Optional

import pytest

from components.config.config_source import spec_from_values
from components.drain.contract import PYTHON
from components.labels import __main__ as step
from components.labels.contract import (
    CONTRACT,
    MANAGER_PREFIX,
    WANTED_ENV,
    LabelCall,
    parse,
    recorded_manager,
    result_line,
)
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT

STORED = json.loads((Path(__file__).parent / "stored" / "contract-1.json").read_text())
TAINT = [{"key": "huawei.com/Ascend910", "value": "present", "effect": "NoSchedule"}]


class Recorder:
    """The nodes the cluster has, and every request the step sent."""

    def __init__(self, nodes: tuple[str, ...] = ("npu-01",)):
        self.nodes, self.sent = set(nodes), []

    def find(self, path: str) -> Optional[dict]:
        return {"metadata": {"name": path.rsplit("/", 1)[-1]}} if path.rsplit("/", 1)[-1] in self.nodes else None

    def request(self, method: str, path: str, body: Any = None, content_type: str = "", query=None) -> Any:
        self.sent.append((method, path, body, content_type))
        return body


def argv_of(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[:4] == ["exec", PYTHON.strip('"'), "-m", "components.labels"], command
    return words[4:]


def run(monkeypatch, capsys, api: Recorder, call: LabelCall, previous: str = "") -> tuple[int, str, str]:
    """The step's main as the local command runs it: its stored line, environment and previous output."""
    monkeypatch.setattr(step, "Api", lambda endpoint: api)
    monkeypatch.setattr(step, "load_endpoint", lambda context: context)
    for key, value in {**call.environment(), "PULUMI_COMMAND_STDOUT": previous}.items():
        monkeypatch.setenv(key, value)
    code = step.main(argv_of(call.command()))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("call", [
    LabelCall("apply", "npu-01", None, {"accelerator": "huawei-Ascend910", "ascend-npu.io/ready": "true"}),
    LabelCall("apply", "npu-07.dc1", "admin@prod", {"a": "b"}, TAINT),
    LabelCall("release", "npu-07.dc1", "admin@prod"),
])
def test_what_the_state_stores_reads_back_as_the_same_call(call):
    assert parse(argv_of(call.command()), call.environment() if call.step == "apply" else {}) == call


def test_the_texts_this_contract_stored_still_read_as_they_did():
    """Written by the first release of the label step for dev's first node: a later release must keep reading it."""
    config = read_stack_config(ROOT, "dev")
    spec = spec_from_values(config.values, config.secret_keys)
    call = parse(argv_of(STORED["create"]), STORED["environment"])
    assert call.node == spec.nodes[0].name and call.labels["ascend-npu.io/ready"] == "true"
    assert parse(argv_of(STORED["delete"]), {}) == call.released()
    assert STORED["contract"] == CONTRACT


def test_a_first_apply_owns_the_labels_under_a_new_manager_and_says_which(monkeypatch, capsys):
    api, call = Recorder(), LabelCall("apply", "npu-01", None, {"a": "b"}, TAINT)
    code, out, _ = run(monkeypatch, capsys, api, call)
    assert code == 0
    ((method, path, body, kind),) = api.sent
    manager = recorded_manager(out)
    assert manager and manager.startswith(MANAGER_PREFIX)
    assert (method, kind) == ("PATCH", "application/apply-patch+yaml")
    assert path == f"/api/v1/nodes/npu-01?fieldManager={manager}&force=true"
    assert body == {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "npu-01", "labels": {"a": "b"}},
                    "spec": {"taints": TAINT}}
    assert "labels npu-01: a=b; taints huawei.com/Ascend910" in out


def test_an_update_applies_under_the_manager_its_last_run_used(monkeypatch, capsys):
    previous = "labels npu-01: a=b\n" + result_line(LabelCall("apply", "npu-01"), MANAGER_PREFIX + "0a1b2c3d", {})
    api = Recorder()
    assert run(monkeypatch, capsys, api, LabelCall("apply", "npu-01", None, {"a": "c"}), previous)[0] == 0
    assert api.sent[0][1] == f"/api/v1/nodes/npu-01?fieldManager={MANAGER_PREFIX}0a1b2c3d&force=true"
    assert "spec" not in api.sent[0][2]  # no taint asked for: the step owns none


def test_a_release_applies_the_bare_node_under_that_manager_without_force(monkeypatch, capsys):
    previous = result_line(LabelCall("apply", "npu-01"), MANAGER_PREFIX + "0a1b2c3d", {"applied": ["a"]})
    api = Recorder()
    code, out, _ = run(monkeypatch, capsys, api, LabelCall("release", "npu-01"), previous)
    assert code == 0 and api.sent == [("PATCH", f"/api/v1/nodes/npu-01?fieldManager={MANAGER_PREFIX}0a1b2c3d",
                                       {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "npu-01"}},
                                       "application/apply-patch+yaml")]
    assert json.loads(out.splitlines()[-1])["released"] is True


@pytest.mark.parametrize("nodes, previous, said", [
    ((), result_line(LabelCall("apply", "npu-01"), MANAGER_PREFIX + "0a1b2c3d", {}), "not in the cluster"),
    (("npu-01",), "", "no apply of this step is recorded"),
    (("npu-01",), '{"fieldManager": "kubectl-label"}', "no apply of this step is recorded"),
])
def test_a_release_with_nothing_to_release_touches_nothing(monkeypatch, capsys, nodes, previous, said):
    api = Recorder(nodes)
    code, out, _ = run(monkeypatch, capsys, api, LabelCall("release", "npu-01"), previous)
    assert code == 0 and api.sent == [] and said in out


def test_a_node_the_cluster_lacks_fails_the_apply_saying_what_to_do(monkeypatch, capsys):
    api = Recorder(nodes=())
    code, _, err = run(monkeypatch, capsys, api, LabelCall("apply", "npu-01", None, {"a": "b"}))
    assert code == 1 and api.sent == []
    assert "node npu-01 is not in the cluster: its kubelet registers it" in err and "run `pulumi up` again" in err


def test_a_command_of_another_contract_or_without_its_labels_is_refused(monkeypatch, capsys):
    api = Recorder()
    monkeypatch.setattr(step, "Api", lambda endpoint: api)
    assert step.main(["apply", "--contract", str(CONTRACT + 1), "--node", "npu-01"]) == 2
    assert "label contract 2, which this program (contract 1) does not know" in capsys.readouterr().err
    monkeypatch.delenv(WANTED_ENV, raising=False)
    assert step.main(["apply", "--contract", str(CONTRACT), "--node", "npu-01"]) == 2
    assert f"{WANTED_ENV} must hold the labels" in capsys.readouterr().err and api.sent == []


def _node(*owners: str, ready: bool = True) -> dict:
    fields = {"f:metadata": {"f:labels": {"f:ascend-npu.io/ready": {}}}}
    return {"metadata": {"labels": {"ascend-npu.io/ready": "true"} if ready else {},
                         "managedFields": [{"manager": owner, "operation": "Update", "fieldsV1": fields}
                                           for owner in owners]}}


def test_a_ready_label_only_the_drain_put_back_goes_with_the_release_and_no_other():
    """After a driver change the drain put `ascend-npu.io/ready` back under its own field manager; the step's
    server-side release drops only its own part, so the label the drain alone still holds is removed with it."""
    from components.labels.__main__ import only_the_drain_keeps_ready
    assert only_the_drain_keeps_ready(_node("ascend-npu-drain"))
    assert not only_the_drain_keeps_ready(_node("ascend-npu-drain", "admin-kubectl"))  # someone else set it too
    assert not only_the_drain_keeps_ready(_node("ascend-npu-labels-1a2b3c4d"))
    assert not only_the_drain_keeps_ready(_node("ascend-npu-drain", ready=False))
