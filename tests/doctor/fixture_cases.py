"""How a doctor fixture is judged: the check family it names runs on the inputs it holds, on the dev stack."""
from __future__ import annotations

import dataclasses
import http.server
import json
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from components.config.config_source import spec_from_values
from components.config.hosts import ContainerRuntime
from components.config.npu_network import NpuPort
from components.doctor import cluster_checks, host_checks
from components.doctor.cluster_checks import ClusterView
from components.doctor.findings import Finding
from components.doctor.remote import HostReport, parse
from components.plan.stack_files import read_stack_config
from tests.stacks import ROOT

FIXTURES = Path(__file__).parent / "fixtures"
NOW = "2026-12-04T12:00:00Z"


def dev_spec(cluster: dict | None = None):
    """The dev stack, with CLUSTER settings (camel case) overlaid on its cluster section."""
    config = read_stack_config(ROOT, "dev")
    values = dict(config.values)
    if cluster:
        key = next(k for k in values if k.endswith(":cluster"))
        values[key] = json.dumps({**json.loads(values[key] or "{}"), **cluster})
    return spec_from_values(values, config.secret_keys, stack="dev")


def the_node(spec, case: dict):
    node = spec.nodes[0]
    changes = case.get("node", {})
    ports = tuple(NpuPort(i, address, "255.255.255.0", "192.168.100.1", "192.168.100.1")
                  for i, address in enumerate(changes.get("npuAddresses", [])))
    return dataclasses.replace(node, npu_count=changes.get("npuCount", node.npu_count),
                               container_runtime=ContainerRuntime(changes.get("engine", node.container_runtime.value)),
                               npu_network=ports)


def clock(case: dict) -> datetime:
    return datetime.strptime(case.get("now", NOW), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


@contextmanager
def api_server(answers: dict[str, dict]):
    """A local API server that answers each path of ANSWERS (an object as JSON, a string as text) and 404 elsewhere;
    the requests it was sent are in its list `seen`."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            body = answers.get(self.path.split("?")[0])
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
            self.end_headers()
            text = body if isinstance(body, str) else json.dumps(body if body is not None else {"code": 404})
            self.wfile.write(text.encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_api(spec, case: dict, tmp_path: Path, monkeypatch) -> list[Finding]:
    """read_cluster against a kubeconfig whose server answers with the case's objects, or does not answer."""
    answers = {path: ({"items": value} if isinstance(value, list) else value)
               for path, value in (case.get("answers") or {}).items()}
    with api_server(answers) as url:
        server = url if case.get("answers") is not None else "http://127.0.0.1:9"
        kubeconfig, context = tmp_path / "kubeconfig", spec.cluster.kube_context or "c"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}]}))
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        found: list[Finding] = []
        cluster_checks.read_cluster(spec, found)
        return found


def run(case: dict, tmp_path: Path, monkeypatch) -> list[Finding]:
    """The findings of the case's check family on its inputs."""
    spec = dev_spec(case.get("cluster"))
    node = the_node(spec, case)
    check = case["check"]
    if check == "host":
        report = HostReport(node.name, error=case["error"]) if "error" in case else parse(node.name, case["probe"])
        return host_checks.host_findings(spec, node, report, case.get("ready", True))
    if check == "node":
        obj = case.get("nodeObject")
        if obj is not None:
            obj = {**obj, "metadata": {"name": node.name, **obj.get("metadata", {})}}
        view = ClusterView(nodes={node.name: obj} if obj else {}, agents=cluster_checks.agents.agents(spec),
                           pods=case.get("pods", {}))
        return cluster_checks.node_findings(spec, node, view, case.get("chips"), clock(case),
                                            timedelta(minutes=case.get("windowMinutes", 60)))
    if check == "cluster":
        view = ClusterView(nodes={n["metadata"]["name"]: n for n in case.get("nodes", [])},
                           pending=case.get("pending", []), runtime_class=case.get("runtimeClass"))
        return cluster_checks.cluster_findings(spec, view)
    if check == "api":
        return run_api(spec, case, tmp_path, monkeypatch)
    raise ValueError(f"fixture check {check!r} is none of host, node, cluster, api")


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.yaml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())
