"""A drain outlives its first token: the real kube-apiserver authenticates an exec plugin's short-lived tokens
through a TokenReview webhook (--authentication-token-webhook-config-file) while a PodDisruptionBudget holds the
eviction for longer than a token lives, on a control plane of its own (no stack, no `pulumi up`)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import yaml

from components.drain.contract import DrainCall
from components.kubeapi.client import Api, wait_for
from engine.cache import REPO, build_problems
from engine.cluster import kwok_stages_dir, register_nodes
from engine.control_plane import ControlPlane
from tests.e2e import npu_workload as work
from tests.e2e.least_privilege import DRAIN_RULES, bind, docs_role, docs_rules
from tests.e2e.token_issuer import USER, TokenIssuer

NODE, RESOURCE = "token-npu-01", "huawei.com/Ascend910"
LIFE = 8  # seconds a token is authenticated
# kube-apiserver keeps a successful token review for 10 s whatever the webhook's own cache says
# (k8s.io/kubernetes v1.36.3 pkg/kubeapiserver/options/authentication.go:168, TokenSuccessCacheTTL).
WEBHOOK_ARGS = ("--authentication-token-webhook-version=v1", "--authentication-token-webhook-cache-ttl=1s")


def training_set(kube: Api) -> None:
    """A ReplicaSet of one training Pod on NODE asking for one NPU, under the budget `work.guard` sets."""
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": work.WORKLOADS}})
    kube.create(f"/apis/apps/v1/namespaces/{work.WORKLOADS}/replicasets", {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": work.APP},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": work.APP}},
                 "template": {"metadata": {"labels": {"app": work.APP}}, "spec": {
                     "nodeSelector": {"kubernetes.io/hostname": NODE}, "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "train", "image": "registry.example/ascend/train:1",
                                     "resources": {"limits": {RESOURCE: "1"}, "requests": {RESOURCE: "1"}}}]}}}})


def running_pod(kube: Api) -> str:
    return wait_for("the training Pod Running", lambda: next(
        (p["metadata"]["name"] for p in kube.items(f"/api/v1/namespaces/{work.WORKLOADS}/pods")
         if p.get("status", {}).get("phase") == "Running"), None), 120)


def drain_user(kube: Api) -> None:
    """The drain's rules as the docs give them (cluster-wide, and the Role for its Events), bound to the webhook's
    user."""
    bind(kube, USER, {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER},
         docs_rules(DRAIN_RULES), docs_role(DRAIN_RULES))


def exec_kubeconfig(plane: ControlPlane, issuer: TokenIssuer) -> str:
    path = plane.home / "drain.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "prod",
        "clusters": [{"name": "local", "cluster": {"server": plane.kube().endpoint.server,
                                                   "certificate-authority": str(plane.pki / "ca.crt")}}],
        "users": [{"name": USER, "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                   "command": str(issuer.plugin), "interactiveMode": "Never"}}}],
        "contexts": [{"name": "prod", "context": {"cluster": "local", "user": USER}}]}))
    return str(path)


@pytest.mark.milestone("fresh")
def test_an_expired_exec_token_is_renewed_while_a_budget_holds_the_eviction(tmp_path):
    problems = build_problems()
    if problems:
        (pytest.fail if os.environ.get("ASCEND_E2E_REQUIRED") == "1" else pytest.skip)("; ".join(problems))
    issuer = TokenIssuer(tmp_path, LIFE)
    args = (f"--authentication-token-webhook-config-file={issuer.webhook_config(tmp_path / 'webhook.yaml')}",
            *WEBHOOK_ARGS)
    plane = ControlPlane(tmp_path / "cluster", context="admin", apiserver_args=args, tied=True)
    try:
        plane.start(kwok_stages_dir())
        kube = plane.kube()
        register_nodes(kube, [{"name": NODE, "arch": "x86_64"}])
        kube.request("PATCH", f"/api/v1/nodes/{NODE}/status", {"status": {"capacity": {RESOURCE: "8"},
                                                                          "allocatable": {RESOURCE: "8"}}},
                     content_type="application/merge-patch+json")
        drain_user(kube)
        training_set(kube)
        pod = running_pod(kube)
        work.guard(kube, 1)
        env = {k: v for k, v in os.environ.items() if k != "PULUMI_COMMAND_STDOUT"}
        call = DrainCall("before-host", NODE, timeout=300, reason="driver 24.1.rc2")
        drain = subprocess.Popen(
            [sys.executable, *call.argv()], cwd=REPO,
            env={**env, "KUBECONFIG": exec_kubeconfig(plane, issuer), **call.environment()},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Held until the unannounced second token was refused (a 401 to the drain) and the plugin ran again.
        wait_for("a refused token, then a third one", lambda: drain.poll() is not None or (
            any(not r["authenticated"] and r["n"] == 2 for r in issuer.reviews) and len(issuer.issued()) >= 3), 120)
        start = issuer.issued()[0]["issued"]
        held = time.time() - start
        work.guard(kube, 0)
        output, _ = drain.communicate(timeout=120)
        issued = issuer.issued()
        refused = [r for r in issuer.reviews if not r["authenticated"]]
        print(f"{output}held {held:.0f} s; tokens issued at (s): {[round(t['issued'] - start, 1) for t in issued]}; "
              f"refused: {[(r['n'], round(r['at'] - start, 1), r['past_expiry']) for r in refused]}")
        assert drain.returncode == 0, output
        assert f"evicted {work.WORKLOADS}/{pod}" in output and "not recorded" not in output
        assert held > 2 * LIFE and refused and all(r["past_expiry"] >= 0 for r in refused), issuer.reviews
        # The second token announced no expiry: only the 401 its refusal gave made the drain run the plugin again.
        second_refused = min(r["at"] for r in refused if r["n"] == 2)
        assert issued[2]["issued"] >= second_refused, (issued, refused)
    finally:
        plane.stop()
        issuer.close()
