"""`python -m components.doctor --stack NAME`: read-only checks of every node of a stack, over SSH and the API.

Exit 0 when healthy (info findings only), 1 on any error or warning, 2 when the stack itself cannot be read, 3 when
nothing is wrong with what was checked but a node or the API could not be checked; 2 outranks 1, 1 outranks 3. It
runs where `pulumi up` runs and needs what `up` needs: SSH to every node (the stack's key: `--identity FILE`, the
agent with ssh.useAgent, or `pulumi config get sshPrivateKey`), and the stack's kubeconfig context with the read
rules docs/day-2.md lists. Nothing on the nodes or in the cluster is changed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from components.cluster.common.node_labels import READY
from components.config.config_source import spec_from_values
from components.config.invocation import relative, running
from components.config.problems import SpecError
from components.doctor import bundle, cluster_checks, host_checks, remote
from components.doctor.findings import STACK_UNREADABLE, Finding, as_json, exit_code, human
from components.plan.stack_files import StackFileError, read_stack_config


def stack_key(stack: str, project: Path, folder: str) -> str:
    """The stack's SSH key from `pulumi config get`, in a private file; SystemExit(2) saying how else to give it."""
    try:
        done = subprocess.run(["pulumi", "config", "get", "sshPrivateKey", "--stack", stack], cwd=project,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        done = subprocess.CompletedProcess([], 1, "", str(err))
    if done.returncode != 0 or "PRIVATE KEY" not in done.stdout:
        print(f"doctor: cannot read the stack's SSH key (`pulumi config get sshPrivateKey` said: "
              f"{done.stderr.strip()[-300:] or 'nothing'}); give one with --identity FILE", file=sys.stderr)
        raise SystemExit(STACK_UNREADABLE)
    path = os.path.join(folder, "stack_key")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        out.write(done.stdout.strip() + "\n")
    return path


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is no whole number of 1 or more")
    return value


def arguments(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m components.doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the folder of Pulumi.yaml")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--identity", help="SSH private key file (default: the stack's own)")
    parser.add_argument("--node-timeout", type=positive, default=60, help="seconds for each node's SSH checks")
    parser.add_argument("--parallel", type=positive, default=16, help="nodes checked at once")
    parser.add_argument("--restart-window", type=positive, default=60, metavar="MINUTES",
                        help="an agent restart that ended longer ago than this is no finding (default 60)")
    parser.add_argument("--bundle", type=Path, metavar="FILE.tar.gz",
                        help="also write a support bundle: what the probe read, step logs, agent logs, events")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = arguments(argv)
    with running("make doctor", args.stack, JSON="1" if args.json else None,
                 BUNDLE=relative(args.bundle) if args.bundle else None):
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    try:
        config = read_stack_config(args.project, args.stack)
        spec = spec_from_values(config.values, config.secret_keys, stack=args.stack)
    except (StackFileError, SpecError) as err:
        print(f"doctor: {err}", file=sys.stderr)
        return STACK_UNREADABLE
    findings: list[Finding] = []
    now, window = datetime.now(timezone.utc), timedelta(minutes=args.restart_window)
    view = cluster_checks.read_cluster(spec, findings)
    reports: dict[str, remote.HostReport] = {}
    with tempfile.TemporaryDirectory(prefix="ascend-npu-doctor-") as folder:
        identity = args.identity
        if identity is None and not spec.ssh.use_agent:
            identity = stack_key(args.stack, args.project, folder)

        def check(node) -> list[Finding]:
            report = reports[node.name] = remote.probe(spec, node, identity, args.node_timeout, args.bundle is not None)
            labels = ((view.nodes.get(node.name) or {}).get("metadata", {}).get("labels") or {})
            seen = None if report.error else host_checks.chips(report)
            found = host_checks.host_findings(spec, node, report, labels.get(READY) == "true")
            if view.api is not None:
                found += cluster_checks.node_findings(spec, node, view, len(seen) if seen is not None else None,
                                                      now, window)
            return found

        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            for index, (node, found) in enumerate(zip(spec.nodes, pool.map(check, spec.nodes)), 1):
                findings += found
                said = "not checked" if reports[node.name].error else f"{len(found)} finding(s)" if found else "ok"
                print(f"[{index}/{len(spec.nodes)}] {node.name}: {said}", file=sys.stderr, flush=True)
        if view.api is not None:
            findings += cluster_checks.cluster_findings(spec, view)
        if args.bundle is not None:
            secrets = bundle.known_secrets(identity, view.api)
            try:
                written = bundle.write(args.bundle, spec, reports, view,
                                       as_json(args.stack, len(spec.nodes), findings), secrets)
                print(f"doctor: support bundle {written}", file=sys.stderr)
            except OSError as err:
                print(f"doctor: --bundle {args.bundle}: cannot write it ({err.strerror or err})", file=sys.stderr)
    show = as_json if args.json else human
    print(show(args.stack, len(spec.nodes), findings))
    return exit_code(findings)


if __name__ == "__main__":
    sys.exit(main())
