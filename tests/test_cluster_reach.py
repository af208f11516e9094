"""A preview reaches the cluster it gates: the stack's kube context exists and its API server answers with the
kubeconfig's credentials, else one line names the context and the kubeconfig. The API servers here are loopback HTTP
servers answering /version as kube-apiserver does (tests/e2e/test_first_up.py runs the real one)."""
from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
import yaml

from components.config.cluster_reach import cluster_problems
from components.config.config_source import spec_from_values
from components.plan.stack_files import read_stack_config, with_placeholders
from tests.stacks import ROOT

TOKEN = "e2e-token"


def spec(context: str | None = None):
    config = with_placeholders(read_stack_config(ROOT, "dev"), [], [])
    values = dict(config.values)
    if context:
        values["ascend-npu:cluster"] = json.dumps({**json.loads(values["ascend-npu:cluster"]), "kubeContext": context})
    return spec_from_values(values, config.secret_keys, stack="dev")


class Version(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        allowed = self.headers.get("Authorization") == f"Bearer {TOKEN}" and self.path == "/version"
        body = json.dumps({"gitVersion": "v1.33.0"} if allowed else
                          {"kind": "Status", "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                           "code": 401}).encode()
        self.send_response(200 if allowed else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Version)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def kubeconfig(path: Path, server: str, token: str = TOKEN, name: str = "lab") -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}]}))
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_cluster_that_answers_passes(tmp_path, server):
    env = {"KUBECONFIG": str(kubeconfig(tmp_path / "config", server))}
    assert cluster_problems(spec(), env) == [] and cluster_problems(spec("lab"), env) == []


def test_a_context_the_kubeconfig_lacks_is_named_with_the_file_and_the_contexts_it_has(tmp_path, server):
    path = kubeconfig(tmp_path / "config", server)
    [problem] = cluster_problems(spec("lab-admin"), {"KUBECONFIG": str(path)})
    assert problem.field == "cluster.kubeContext"
    assert f"context 'lab-admin' is not in {path}; set cluster.kubeContext to one of: lab" in problem.message


def test_no_kubeconfig_at_all_says_where_one_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    [problem] = cluster_problems(spec(), {"HOME": str(tmp_path)})
    assert "no kubeconfig: set KUBECONFIG or write ~/.kube/config" in problem.message
    assert "docs/pull-request-checks.md" in problem.message


def test_an_api_server_that_does_not_answer_is_named_with_the_kubeconfig(tmp_path):
    path = kubeconfig(tmp_path / "config", f"http://127.0.0.1:{closed_port()}")
    [problem] = cluster_problems(spec(), {"KUBECONFIG": str(path)})
    assert problem.message.startswith(f"context 'lab' of KUBECONFIG={path}: the API server http://127.0.0.1:")
    assert "did not answer (" in problem.message and "waited at most 10 s" in problem.message


def test_credentials_the_api_server_refuses_are_named(tmp_path, server):
    path = kubeconfig(tmp_path / "config", server, token="expired")
    [problem] = cluster_problems(spec(), {"KUBECONFIG": str(path)})
    assert "refused the kubeconfig's credentials (HTTP 401)" in problem.message


def test_the_offline_plan_never_dials_a_cluster(tmp_path, capsys, monkeypatch):
    from components.plan.stack_plan import plan
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    assert plan("dev", tmp_path, quiet=True) == 0
