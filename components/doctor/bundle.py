"""A support bundle (tar.gz): per node what the probe read and the step logs, the agents' logs and events, the
doctor's report and a manifest of what was collected and what failed; known secrets are cut out of every file."""
from __future__ import annotations

import io
import json
import os
import re
import tarfile
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Optional

from components.config import StackSpec
from components.doctor.cluster_checks import ClusterView
from components.doctor.remote import HostReport
from components.kubeapi.client import Api

LOG_LINES = 2000  # each container's log, its last lines
REDACTED = "[redacted]"
# Registry logins in an engine config: containerd's registry.configs.*.auth and Docker's auths.
LOGIN = re.compile(r'^(\s*"?(?:password|auth|identitytoken|identity_token|registrytoken|token)"?\s*[=:]\s*).*$',
                   re.I | re.M)
SECTION_FILES = {"npu-smi": "npu-smi-info.txt", "devices": "devices.txt", "file:daemon.json": "engine/daemon.json",
                 "containerd": "engine/containerd-config.toml", "file:install.info": "ascend_install.info"}


def known_secrets(identity: Optional[str], api: Optional[Api]) -> list[str]:
    """What must never reach the bundle: the SSH key the doctor used and the kubeconfig's credentials."""
    found = []
    if identity and os.path.isfile(identity):
        found.append(Path(identity).read_text())
    if api is not None:
        endpoint = api.endpoint
        found += [endpoint.token or "", endpoint.key_pem or "", (endpoint.basic or ("", ""))[1]]
        try:
            current = endpoint.credentials()  # an exec plugin's token, cached by the client
            found += [current.token or "", current.key_pem or ""]
        except Exception:  # noqa: BLE001 - a plugin that fails now gave no credential to leak
            pass
    return found


def redact(text: str, secrets: list[str]) -> str:
    """TEXT without any secret, nor any line of a multi-line one (a key), nor a registry login."""
    for secret in secrets:
        for part in [secret.strip(), *(line.strip() for line in secret.splitlines() if len(line.strip()) >= 16)]:
            if len(part) >= 6:
                text = text.replace(part, REDACTED)
    return LOGIN.sub(lambda m: m.group(1) + REDACTED, text)


class Bundle:
    """The archive being written, and the manifest of its entries."""

    def __init__(self, tar: tarfile.TarFile, secrets: list[str]):
        self.tar, self.secrets = tar, secrets
        self.manifest: list[dict] = []

    def add(self, name: str, text: str, source: str) -> None:
        data = redact(text, self.secrets).encode()
        info = tarfile.TarInfo(f"support-bundle/{name}")
        info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
        self.tar.addfile(info, io.BytesIO(data))
        self.manifest.append({"file": name, "source": source, "collected": True})

    def failed(self, name: str, source: str, why: str) -> None:
        self.manifest.append({"file": name, "source": source, "collected": False, "why": redact(why, self.secrets)})


def add_node(out: Bundle, name: str, report: Optional[HostReport]) -> None:
    if report is None or report.error:
        out.failed(f"nodes/{name}/", "SSH probe", (report.error if report else None) or "not probed")
        return
    for section, (words, body) in report.sections.items():
        kind, _, rest = section.partition(":")
        path = words.split()[0] if words.split() else ""
        if section in SECTION_FILES:
            target = SECTION_FILES[section]
        elif kind == "file":
            target = f"versions/{rest}.info"
        elif kind == "log":
            target = f"logs/{rest}"
        else:
            continue
        if (kind == "file" or section == "containerd") and path in ("", "-"):
            out.failed(f"nodes/{name}/{target}", f"{section} on the node", "no such file on the node")
        else:
            source = "npu-smi info" if section == "npu-smi" else path or section
            out.add(f"nodes/{name}/{target}", body + "\n", source)
    versions = {s.partition(":")[2]: report.body(s) + f"\nmatches={report.header(s)}" for s in report.sections
                if s.startswith("version:")}
    out.add(f"nodes/{name}/versions/read-as-verify.json", json.dumps(versions, indent=2), "lib.sh installed_version")


def add_cluster(out: Bundle, spec: StackSpec, view: ClusterView) -> None:
    if view.api is None:
        out.failed("cluster/", "Kubernetes API", "the API did not answer (see the report's api-unreachable)")
        return
    names = {n.name for n in spec.nodes}
    for name in sorted(names & set(view.nodes)):
        node = {**view.nodes[name], "metadata": {k: v for k, v in view.nodes[name]["metadata"].items()
                                                 if k != "managedFields"}}
        out.add(f"cluster/nodes/{name}.json", json.dumps(node, indent=2), f"GET /api/v1/nodes/{name}")
    for agent in view.agents:
        for pod in view.pods.get(agent.operand, []):
            meta = pod["metadata"]
            path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/log"
            for status in (pod.get("status") or {}).get("containerStatuses") or []:
                runs: list[tuple[str, dict]] = [("", {})] + (
                    [(".previous", {"previous": "true"})] if status.get("restartCount") else [])
                for suffix, extra in runs:
                    target = f"cluster/logs/{meta['name']}/{status['name']}{suffix}.log"
                    try:
                        query = urllib.parse.urlencode({"container": status["name"], "tailLines": LOG_LINES, **extra})
                        out.add(target, view.api.text(f"{path}?{query}"), f"GET {path}")
                    except Exception as err:  # noqa: BLE001 - any failure is recorded, the rest still collected
                        out.failed(target, f"GET {path}", str(err))
    for namespace in sorted({agent.namespace for agent in view.agents}):
        events(out, view.api, f"/api/v1/namespaces/{namespace}/events", f"cluster/events/{namespace}.json", {})
    events(out, view.api, "/api/v1/events", "cluster/events/nodes.json", {"fieldSelector": "involvedObject.kind=Node"},
           names)


def events(out: Bundle, api: Api, path: str, target: str, query: dict, nodes: Optional[set] = None) -> None:
    try:
        found = [e for e in api.items(path, **query) if nodes is None or e["involvedObject"].get("name") in nodes]
        out.add(target, json.dumps(found, indent=2), f"GET {path}")
    except Exception as err:  # noqa: BLE001 - any failure is recorded, the rest still collected
        out.failed(target, f"GET {path}", str(err))


def write(target: Path, spec: StackSpec, reports: dict[str, HostReport], view: ClusterView, report: str,
          secrets: list[str]) -> Path:
    """Write the bundle at TARGET (whole or not at all); its path."""
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=".bundle-", suffix=".tar.gz")
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            out = Bundle(tar, secrets)
            out.add("report.json", report, "the doctor's report (--json)")
            for node in spec.nodes:
                add_node(out, node.name, reports.get(node.name))
            add_cluster(out, spec, view)
            manifest = {"stack": json.loads(report)["stack"], "entries": out.manifest}
            out.add("manifest.json", json.dumps(manifest, indent=2), "this list")
        os.chmod(scratch, 0o600)
        os.replace(scratch, target)
    except BaseException:
        os.unlink(scratch)
        raise
    return target
