"""`python -m components.doctor --stack NAME`: read-only checks of every node of a stack, over SSH and the API.

Exit 0 when healthy, 1 on any finding, 2 when the stack itself cannot be read. It runs where `pulumi up` runs and
needs what `up` needs: SSH to every node (the stack's key: `--identity FILE`, the agent with ssh.useAgent, or
`pulumi config get sshPrivateKey`), and the stack's kubeconfig context with read access to nodes, pods and
runtimeclasses. Nothing on the nodes or in the cluster is changed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from components.cluster.common.node_labels import READY
from components.config.config_source import spec_from_values
from components.config.problems import SpecError
from components.doctor import cluster_checks, host_checks, remote
from components.doctor.findings import CLUSTER, Finding, as_json, human
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint
from components.plan.stack_files import StackFileError, read_stack_config


def stack_key(stack: str, project: Path, folder: str) -> str:
    """The stack's SSH key from `pulumi config get`, in a private file; SystemExit(2) saying how else to give it."""
    try:
        done = subprocess.run(["pulumi", "config", "get", "sshPrivateKey", "--stack", stack], cwd=project,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        done = subprocess.CompletedProcess([], 1, "", str(err))
    if done.returncode != 0 or "PRIVATE KEY" not in done.stdout:
        raise SystemExit(f"doctor: cannot read the stack's SSH key (`pulumi config get sshPrivateKey` said: "
                         f"{done.stderr.strip()[-300:] or 'nothing'}); give one with --identity FILE")
    path = os.path.join(folder, "stack_key")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        out.write(done.stdout.strip() + "\n")
    return path


def cluster_view(spec, findings: list[Finding]) -> tuple[Optional[Api], dict, dict, list]:
    """Nodes by name, agent Pods by component and every Pending Pod; empty with a finding when the API cannot
    answer."""
    try:
        api = Api(load_endpoint(spec.cluster.kube_context))
        nodes = {n["metadata"]["name"]: n for n in api.items("/api/v1/nodes")}
        agents = {c: list(api.items(f"/api/v1/namespaces/{spec.cluster.namespace}/pods",
                                    labelSelector=f"app.kubernetes.io/component={c}"))
                  for c in cluster_checks.AGENTS}
        pending = list(api.items("/api/v1/pods", fieldSelector="status.phase=Pending"))
        return api, nodes, agents, pending
    except (KubeconfigError, ApiError) as err:
        findings.append(Finding("unchecked", CLUSTER, "api", f"the API was not checked: {err}",
                                "the doctor uses the stack's kubeconfig context (cluster.kubeContext) and lists "
                                "nodes and pods, gets runtimeclasses: see the README's rules"))
        return None, {}, {}, []


def runtime_class_findings(api: Api, spec) -> list[Finding]:
    if spec.cluster.ascend_default_runtime:
        return []
    rc = api.find("/apis/node.k8s.io/v1/runtimeclasses/ascend")
    if rc is None or rc.get("handler") != host_checks.HANDLER:
        what = "RuntimeClass ascend is missing" if rc is None else f"RuntimeClass ascend has handler {rc['handler']}"
        return [Finding("7.3", CLUSTER, "runtimeclass", f"{what}: NPU Pods run on the engine's default runtime",
                        "`pulumi up` creates it (handler ascend)")]
    return []


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the folder of Pulumi.yaml")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--identity", help="SSH private key file (default: the stack's own)")
    parser.add_argument("--node-timeout", type=int, default=60, help="seconds for each node's SSH checks")
    parser.add_argument("--parallel", type=int, default=16, help="nodes checked at once")
    args = parser.parse_args(argv)
    try:
        config = read_stack_config(args.project, args.stack)
        spec = spec_from_values(config.values, config.secret_keys, stack=args.stack)
    except (StackFileError, SpecError) as err:
        print(f"doctor: {err}", file=sys.stderr)
        return 2
    findings: list[Finding] = []
    api, nodes, agents, pending = cluster_view(spec, findings)
    with tempfile.TemporaryDirectory(prefix="ascend-npu-doctor-") as folder:
        identity = args.identity
        if identity is None and not spec.ssh.use_agent:
            identity = stack_key(args.stack, args.project, folder)

        def check(node) -> list[Finding]:
            report = remote.probe(spec, node, identity, args.node_timeout)
            ready = ((nodes.get(node.name) or {}).get("metadata", {}).get("labels") or {}).get(READY) == "true"
            seen = None if report.error else host_checks.chips(report)
            found = host_checks.host_findings(spec, node, report, ready)
            if api is not None:
                found += cluster_checks.node_findings(spec, node, nodes.get(node.name),
                                                      len(seen) if seen is not None else None, agents)
            return found

        with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
            for index, (node, found) in enumerate(zip(spec.nodes, pool.map(check, spec.nodes)), 1):
                findings += found
                print(f"[{index}/{len(spec.nodes)}] {node.name}: "
                      + (f"{len(found)} finding(s)" if found else "ok"), file=sys.stderr, flush=True)
    if api is not None:
        findings += runtime_class_findings(api, spec) + cluster_checks.pending_findings(pending, list(nodes.values()))
    show = as_json if args.json else human
    print(show(args.stack, len(spec.nodes), findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
