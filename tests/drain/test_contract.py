"""The drain's contract: what the state stores today reads back as the same call, and what the program stored before
the contract had a number (tests/drain/stored/contract-1.json) still runs, meaning what it meant then.

Simulated: the API server, in memory (tests/drain/memory_api.py); the shell runs of stored lines use a real bash and
a kubeconfig whose server does not answer, to show the line gets through the shell and the parser to the API.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from components.drain.__main__ import leave, main
from components.drain.contract import CONTRACT, PYTHON, REASON_ENV, DrainCall, parse, previous_reason
from tests.drain.memory_api import MemoryApi, node, pod
from tests.stacks import ROOT

STORED = json.loads((Path(__file__).parent / "stored" / "contract-1.json").read_text())["nodes"]


def argv_of(command: str) -> list[str]:
    """The arguments a stored line hands the drain: after `exec <python> -m components.drain`."""
    words = shlex.split(command)
    assert words[:4] == ["exec", PYTHON.strip('"'), "-m", "components.drain"], command
    return words[4:]


@pytest.mark.parametrize("call", [
    DrainCall("before-host", "npu-01"),
    DrainCall("before-host", "npu-07.dc1", "admin@prod", 900, "app in (a,b),tier!=batch", True, True, 0,
              reason="driver 24.1.rc2, firmware 7.3.0.1.231, docker runtime 6.0.0, default runtime ascend"),
    DrainCall("after-host", "n-1", "ctx", reason="driver x, firmware y"),
    DrainCall("leave", "n-1", evict=False, reason="r"),
    DrainCall("leave", "n-1", timeout=30, force=True, grace_period=60, evict=True, reason="r"),
])
def test_what_the_program_writes_reads_back_as_the_same_call(call):
    back = parse(argv_of(call.command())[:], call.environment())
    significant = DrainCall(**{**call.__dict__, **({} if call.evicts() else
                                                   {"timeout": 600, "selector": "", "force": False,
                                                    "delete_empty_dir_data": False, "grace_period": None})})
    assert back == significant
    assert json.loads(call.result_line({"drained": False}))["contract"] == CONTRACT


@pytest.mark.parametrize("stored", STORED, ids=[s["case"] for s in STORED])
def test_stored_lines_of_contract_1_mean_what_they_meant(stored):
    for key in ("drain", "uncordon", "leave"):
        call = parse(argv_of(stored[key]), stored["environment"])
        assert (call.contract, call.node, call.reason) == (1, stored["node"], stored["environment"][REASON_ENV])
    # That program evicted every chosen Pod, bare or emptyDir, and always drained a leaving node.
    left = parse(argv_of(stored["leave"]), stored["environment"])
    assert left.evict and left.force and left.delete_empty_dir_data and left.evicts()
    assert previous_reason(stored["stdout"]) == stored["environment"][REASON_ENV]


def test_a_stored_leave_of_contract_1_still_drains_a_bare_pod_as_it_did():
    stored = STORED[0]
    api = MemoryApi([node()], [pod("solo", owner=None)])
    done = leave(api, parse(argv_of(stored["leave"]), stored["environment"]), clock=api.clock, sleep=api.sleep)
    assert done == {"drained": True, "evicted": ["team-a/solo"]}


def shell(command: str, tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    """A stored line run as the command provider runs it: `bash -c` from the project folder."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin@prod",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "admin@prod", "context": {"cluster": "c", "user": "u"}}]}))
    full = {"PATH": os.environ["PATH"], "ASCEND_NPU_PYTHON": sys.executable, "KUBECONFIG": str(kubeconfig), **env}
    return subprocess.run(["bash", "-c", command], cwd=ROOT, env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("key", ["drain", "uncordon", "leave"])
def test_stored_lines_get_through_the_shell_and_the_parser_to_the_api(key, tmp_path):
    stored = STORED[1]
    done = shell(stored[key], tmp_path, stored["environment"])
    assert done.returncode == 1, done.stderr
    assert f"{stored['node']}: the API refused" in done.stderr and "did not answer" in done.stderr, done.stderr


def test_a_line_from_a_newer_program_is_refused_saying_so(capsys):
    assert main(["leave", "--contract", str(CONTRACT + 1), "--node", "npu-01"]) == 2
    err = capsys.readouterr().err
    assert f"contract {CONTRACT + 1}" in err and "last ran `pulumi up`" in err



def test_the_output_line_stays_far_under_the_providers_64_kib_line_limit_however_many_pods_went():
    names = [f"{'n' * 63}/{'p' * 253}-{i}" for i in range(5000)]
    line = DrainCall("before-host", "npu-01", reason="driver x").result_line({"drained": True, "evicted": names})
    assert len(line.encode()) < 32 * 1024
    back = json.loads(line)
    assert back["evicted_count"] == 5000 and back["evicted"] == names[:100] and previous_reason(line) == "driver x"
