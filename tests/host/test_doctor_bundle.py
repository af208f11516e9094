"""The support bundle from a fake node over its real sshd and a stand-in API: what a support case needs is in it,
what failed is in its manifest, and no secret the doctor holds reaches it."""
from __future__ import annotations

import json
import tarfile

import pytest

from components.doctor import bundle, remote
from components.doctor.checks.agents import Agent
from components.doctor.cluster_checks import ClusterView
from components.kubeapi.client import Api
from components.kubeapi.kubeconfig import Endpoint
from tests.doctor.fixture_cases import api_server
from tests.host.test_doctor_probe import doctor_spec

TOKEN = "kube-token-5f0c2d1e9a7b4c3d"
REGISTRY_PASSWORD = "registry-password-4411"
POD = {"metadata": {"name": "ascend-device-plugin-910b-x1", "namespace": "ascend-system"},
       "spec": {"nodeName": "fake-npu-01"},
       "status": {"containerStatuses": [{"name": "device-plugin", "restartCount": 1}]}}
LOG = "/api/v1/namespaces/ascend-system/pods/ascend-device-plugin-910b-x1/log"


@pytest.fixture
def installed(node):
    done = node.run_step(node.spec(), "install")
    assert done.returncode == 0, done.stderr
    return node, doctor_spec(node)


def members(path) -> dict[str, str]:
    with tarfile.open(path) as tar:
        return {m.name.removeprefix("support-bundle/"): tar.extractfile(m).read().decode() for m in tar.getmembers()}


def test_a_bundle_holds_the_node_and_agent_evidence_and_no_secret(installed, tmp_path):
    node, spec = installed
    key = (node.ssh_dir / "client_key").read_text()
    # A step log that somehow holds the key, and an engine config with a registry login.
    node.path("/var/log/ascend-npu/run.log").open("a").write(f"oops {key.splitlines()[1]}\n")
    config = node.path("/etc/containerd/config.toml")
    config.write_text(config.read_text() + f'\n[plugins."io.containerd.grpc.v1.cri".registry.configs."r.example".auth]'
                      f'\n  username = "robot"\n  password = "{REGISTRY_PASSWORD}"\n')
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60, bundle=True)
    assert report.error is None
    answers = {LOG: f"I1204 device plugin started, token {TOKEN}\n", "/api/v1/namespaces/ascend-system/events": {
        "items": [{"involvedObject": {"kind": "Pod", "name": POD["metadata"]["name"]}, "reason": "BackOff"}]},
        "/api/v1/events": {"items": [{"involvedObject": {"kind": "Node", "name": "fake-npu-01"}, "reason": "Cordon"},
                                     {"involvedObject": {"kind": "Node", "name": "other"}, "reason": "Cordon"}]}}
    with api_server(answers) as url:
        api = Api(Endpoint(context="c", server=url, token=TOKEN))
        view = ClusterView(api=api, nodes={"fake-npu-01": {"metadata": {"name": "fake-npu-01", "managedFields": []}}},
                           agents=[Agent("device-plugin", "ascend-system", ("app=x",))],
                           pods={"device-plugin": [POD]})
        target = bundle.write(tmp_path / "case.tar.gz", spec, {"fake-npu-01": report}, view,
                              json.dumps({"stack": "case", "findings": []}), bundle.known_secrets(
                                  str(node.ssh_dir / "client_key"), api))
    files = members(target)
    base = "nodes/fake-npu-01/"
    assert "NPU" in files[base + "npu-smi-info.txt"] and "Health" in files[base + "npu-smi-info.txt"]
    assert {f"{base}versions/{k}.info" for k in ("driver", "firmware", "toolkit", "kernels", "dockerRuntime")} <= \
        set(files)
    assert json.loads(files[base + "versions/read-as-verify.json"])["driver"].startswith("found=")
    assert "ascend-docker-runtime" in files[base + "engine/containerd-config.toml"]
    assert "[verify]" in files[base + "logs/run.log"] or "[install]" in files[base + "logs/run.log"]
    assert "device plugin started" in files["cluster/logs/ascend-device-plugin-910b-x1/device-plugin.log"]
    assert [e["reason"] for e in json.loads(files["cluster/events/nodes.json"])] == ["Cordon"]  # only its nodes
    assert "managedFields" not in files["cluster/nodes/fake-npu-01.json"]
    manifest = json.loads(files["manifest.json"])
    assert {e["file"] for e in manifest["entries"] if e["collected"]} == set(files) - {"manifest.json"}
    assert "cluster/logs/ascend-device-plugin-910b-x1/device-plugin.previous.log" in files  # it restarted once
    assert [e["file"] for e in manifest["entries"] if not e["collected"]] == [base + "engine/daemon.json"]
    text = "".join(files.values())
    assert TOKEN not in text and REGISTRY_PASSWORD not in text
    assert not any(line in text for line in key.splitlines() if len(line) >= 16)
    assert "[redacted]" in files[base + "logs/run.log"]
    assert oct(target.stat().st_mode & 0o777) == "0o600"
