"""etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as processes on loopback."""
from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from components.kubeapi.client import Api, wait_for
from components.kubeapi.kubeconfig import pki_endpoint
from engine.cache import BIN
from engine.pki import make_pki, write_kubeconfig

SERVICE_CIDR = "10.96.0.0/16"
PR_SET_PDEATHSIG = 1
# The order they start in; stop goes the other way.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
# kwok's own stage definitions, read from the kwok release that `make engine` built: nodes become Ready and
# keep a lease, pods run, Job pods complete, deleted pods go.
KWOK_STAGES = ("node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
               "pod/general/pod-create.yaml", "pod/general/pod-init-container-running.yaml",
               "pod/general/pod-init-container-completed.yaml", "pod/general/pod-ready.yaml",
               "pod/general/pod-complete.yaml", "pod/general/pod-delete.yaml")


def _terminate_with_parent() -> None:
    """SIGKILL when the thread that started this process ends (prctl PR_SET_PDEATHSIG). Not SIGTERM: etcd gets it
    at the same moment and goes at once, and kube-apiserver's graceful shutdown then waits on its storage; one was
    seen still running minutes after its bench was stopped. A tied cluster is thrown away with its caller."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ControlPlane:
    """One local cluster whose files (pki, etcd data, logs, pids, kubeconfig) live under `home`."""

    home: Path
    context: str = "ascend-npu-local"
    # Extra kube-apiserver flags (an authenticator a scenario serves, say).
    apiserver_args: tuple[str, ...] = ()
    # Stopped by the kernel when the process that started it dies, even killed (a bench's or a test run's own
    # cluster); `make cluster`'s outlives the make that started it.
    tied: bool = False
    _api: Api | None = field(default=None, init=False, repr=False)

    @property
    def pki(self) -> Path:
        return self.home / "pki"

    @property
    def kubeconfig(self) -> Path:
        return self.home / "kubeconfig"

    def ports(self) -> dict:
        return json.loads((self.home / "ports.json").read_text())

    def kube(self) -> Api:
        """The API server as its admin, through the client the program itself uses (one per server address)."""
        server = f"https://127.0.0.1:{self.ports()['apiserver']}"
        if self._api is None or self._api.endpoint.server != server:
            self._api = Api(pki_endpoint(server, self.pki, context=self.context))
        return self._api

    def running(self) -> list[str]:
        """The components whose recorded process is alive."""
        return [name for name in COMPONENTS if self._pid(name) is not None]

    def _pid(self, name: str) -> int | None:
        path = self.home / "run" / f"{name}.pid"
        if not path.exists():
            return None
        pid = int(path.read_text())
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return None
        return None if state == "Z" else pid

    def _spawn(self, name: str, args: list[str]) -> None:
        (self.home / "run").mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        log = open(self.home / "logs" / f"{name}.log", "ab")
        # A session of its own: a ^C at the terminal reaches the caller, which stops the cluster in order.
        proc = subprocess.Popen([str(BIN / ("kwok" if name == "kwok" else name)), *args], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=_terminate_with_parent if self.tied else None)
        (self.home / "run" / f"{name}.pid").write_text(str(proc.pid))
        print(f"cluster: {name} started (pid {proc.pid}, log {self.home / 'logs' / (name + '.log')})", flush=True)

    def start(self, kwok_stages_dir: Path) -> None:
        """Start every component not running yet; wait until the API server answers /readyz."""
        make_pki(self.pki)
        if not (self.home / "ports.json").exists():
            ports = {name: free_port() for name in ("etcd", "etcd-peer", "apiserver", "controller-manager",
                                                    "scheduler", "kwok")}
            (self.home / "ports.json").write_text(json.dumps(ports))
        ports, pki = self.ports(), self.pki
        server = f"https://127.0.0.1:{ports['apiserver']}"
        for user in ("admin", "controller-manager", "scheduler", "kwok"):
            write_kubeconfig(self.home / f"{user}.kubeconfig", server, pki, user, self.context)
        write_kubeconfig(self.kubeconfig, server, pki, "admin", self.context)
        self._start_etcd(ports)
        self._start_apiserver(ports)
        wait_for("kube-apiserver /readyz", lambda: self.kube().ready(), 180)
        self._start_controllers(ports)
        self._start_kwok(ports, kwok_stages_dir)

    def _start_etcd(self, ports: dict) -> None:
        if self._pid("etcd"):
            return
        client, peer = f"http://127.0.0.1:{ports['etcd']}", f"http://127.0.0.1:{ports['etcd-peer']}"
        self._spawn("etcd", ["--name=local", f"--data-dir={self.home / 'etcd'}", f"--listen-client-urls={client}",
                             f"--advertise-client-urls={client}", f"--listen-peer-urls={peer}",
                             f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=local={peer}",
                             "--quota-backend-bytes=4294967296", "--log-level=warn"])
        wait_for("etcd /health", lambda: b'"true"' in urllib.request.urlopen(f"{client}/health", timeout=2).read(), 60)

    def _start_apiserver(self, ports: dict) -> None:
        if self._pid("kube-apiserver"):
            return
        pki = self.pki
        self._spawn("kube-apiserver", [
            f"--etcd-servers=http://127.0.0.1:{ports['etcd']}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={ports['apiserver']}",
            f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--authorization-mode=Node,RBAC", "--allow-privileged=true", f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--endpoint-reconciler-type=none", f"--cert-dir={pki}", "--v=1", *self.apiserver_args])

    def _start_controllers(self, ports: dict) -> None:
        pki = self.pki
        if not self._pid("kube-controller-manager"):
            self._spawn("kube-controller-manager", [
                f"--kubeconfig={self.home / 'controller-manager.kubeconfig'}", "--leader-elect=false",
                "--bind-address=127.0.0.1", f"--secure-port={ports['controller-manager']}",
                f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
                "--use-service-account-credentials=true", f"--service-cluster-ip-range={SERVICE_CIDR}", "--v=1"])
        if not self._pid("kube-scheduler"):
            self._spawn("kube-scheduler", [
                f"--kubeconfig={self.home / 'scheduler.kubeconfig'}", "--leader-elect=false",
                "--bind-address=127.0.0.1", f"--secure-port={ports['scheduler']}", "--v=1"])

    def _start_kwok(self, ports: dict, stages_dir: Path) -> None:
        if self._pid("kwok"):
            return
        config = self.home / "kwok.yaml"
        config.write_text("\n---\n".join((stages_dir / stage).read_text() for stage in KWOK_STAGES))
        self._spawn("kwok", [
            f"--kubeconfig={self.home / 'kwok.kubeconfig'}", f"--config={config}", "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake", "--node-ip=127.0.0.1",
            "--cidr=10.244.0.0/16", f"--server-address=127.0.0.1:{ports['kwok']}",
            f"--node-port={ports['kwok']}", "--node-lease-duration-seconds=40", "--v=INFO"])

    def stop(self) -> None:
        """SIGTERM each component in reverse order, SIGKILL what is still there after 20 s."""
        for name in reversed(COMPONENTS):
            pid = self._pid(name)
            if pid is None:
                continue
            os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while self._pid(name) and time.monotonic() < deadline:
                time.sleep(0.2)
            if self._pid(name):
                os.killpg(pid, signal.SIGKILL)
            (self.home / "run" / f"{name}.pid").unlink(missing_ok=True)
            print(f"cluster: {name} stopped", flush=True)
