"""Exec credential plugins as client-go v0.36.3 runs them (plugin/pkg/client/auth/exec/exec.go): cached until
status.expirationTimestamp, run again once after a 401 and the call made once more, a client pair that rotates."""
from __future__ import annotations

import ssl
from datetime import datetime, timezone

import pytest
import yaml

from components.kubeapi.client import Api, ApiError
from components.kubeapi.exec_plugin import ExecPlugin
from components.kubeapi.kubeconfig import Endpoint, KubeconfigError, load_endpoint
from engine.pki import make_pki
from tests.drain.exec_fixtures import ApiServer, Plugin, credential

V1 = "client.authentication.k8s.io/v1"
T0 = datetime(2026, 12, 22, 7, 46, 40, tzinfo=timezone.utc).timestamp()
AT = "2026-12-22T07:47:40Z"  # T0 + 60 s


@pytest.fixture
def plugin(tmp_path) -> Plugin:
    return Plugin(tmp_path)


@pytest.fixture
def server():
    server = ApiServer()
    yield server
    server.close()


def spec(plugin: Plugin, **extra) -> dict:
    return {"apiVersion": V1, "command": str(plugin.path), "interactiveMode": "Never", **extra}


def api(server: ApiServer, plugin: ExecPlugin) -> Api:
    return Api(Endpoint(context="prod", server=server.url, plugin=plugin))


def kubeconfig(tmp_path, server: str, user: dict, **cluster) -> dict:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "prod",
           "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
           "users": [{"name": "u", "user": user}], "contexts": [{"name": "prod", "context": {"cluster": "c",
                                                                                           "user": "u"}}]}
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(doc))
    return {"KUBECONFIG": str(tmp_path / "kubeconfig")}


def test_a_credential_is_kept_until_its_expiry_then_the_plugin_runs_again(plugin):
    clock = [T0]
    plugin.answer(credential("tok-1", expires=AT), credential("tok-2"))
    exec_plugin = ExecPlugin(spec(plugin), now=lambda: clock[0])
    assert [exec_plugin.credentials().token for _ in range(3)] == ["tok-1"] * 3
    clock[0] = T0 + 60  # expired only once the clock is past it (exec.go credsExpired: now.After(exp))
    assert exec_plugin.credentials().token == "tok-1"
    clock[0] = T0 + 61
    assert exec_plugin.credentials().token == "tok-2"
    clock[0] = T0 + 10**6  # no expirationTimestamp: kept until a 401
    assert (exec_plugin.credentials().token, len(plugin.calls())) == ("tok-2", 2)


def test_a_401_runs_the_plugin_once_and_the_call_is_made_once_more(plugin, server):
    plugin.answer(credential("tok-1"), credential("tok-2"), credential("tok-3"))
    server.accepted = {"tok-2"}
    client = api(server, ExecPlugin(spec(plugin)))
    assert client.get("/api/v1/nodes/n")["kind"] == "Node"
    assert (server.seen, len(plugin.calls())) == (["tok-1", "tok-2"], 2)
    assert client.get("/api/v1/nodes/n") and len(plugin.calls()) == 2
    server.accepted = set()
    with pytest.raises(ApiError) as refused:
        client.get("/api/v1/nodes/n")
    assert refused.value.status == 401 and refused.value.reason == "Unauthorized"
    assert (server.seen[3:], len(plugin.calls())) == (["tok-2", "tok-3"], 3)


def test_a_plugin_that_fails_on_renewal_names_the_context_and_the_plugin(plugin, server):
    plugin.answer(credential("tok-1"), {"exit": 3})
    client = api(server, ExecPlugin(spec(plugin)))
    with pytest.raises(KubeconfigError, match=rf"context 'prod': exec credential plugin '{plugin.path}': "
                                              rf"executable {plugin.path} failed with exit code 3"):
        client.get("/api/v1/nodes/n")


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_v1_and_v1beta1_answers(plugin, server, tmp_path, version):
    plugin.answer(credential("tok-1", version=version, expires="2026-12-22T07:47:40.5+00:00"))
    server.accepted = {"tok-1"}
    user = {"exec": {"apiVersion": f"client.authentication.k8s.io/{version}", "command": str(plugin.path)}}
    if version == "v1":
        with pytest.raises(KubeconfigError, match="interactiveMode must be one of Never, IfAvailable, Always"):
            load_endpoint(None, kubeconfig(tmp_path, server.url, user))
        user["exec"]["interactiveMode"] = "Never"
    endpoint = load_endpoint(None, kubeconfig(tmp_path, server.url, user))
    assert Api(endpoint).get("/api/v1/nodes/n")["kind"] == "Node"
    assert endpoint.credentials().expires == T0 + 60.5
    sent = plugin.calls()[-1]["info"]
    assert sent == {"apiVersion": f"client.authentication.k8s.io/{version}", "kind": "ExecCredential",
                    "spec": {"interactive": False}}
    plugin.answer(credential("tok-1", version="v1beta1" if version == "v1" else "v1"))
    with pytest.raises(RuntimeError, match=f"configured for client.authentication.k8s.io/{version}, it answered"):
        ExecPlugin(spec(plugin, apiVersion=f"client.authentication.k8s.io/{version}")).credentials()


def test_cluster_info_env_and_stdin_as_client_go_hands_them_over(plugin, server, tmp_path, monkeypatch):
    monkeypatch.setenv("REGION", "from-the-caller")
    plugin.answer(credential("tok-1"))
    extension = {"name": "client.authentication.k8s.io/exec", "extension": {"audience": "prod"}}
    user = {"exec": spec(plugin, provideClusterInfo=True, env=[{"name": "REGION", "value": "eu-1"}])}
    load_endpoint(None, kubeconfig(tmp_path, server.url, user, extensions=[extension]))
    call = plugin.calls()[-1]
    assert call["info"]["spec"] == {"interactive": False, "cluster": {"server": server.url,
                                                                       "config": {"audience": "prod"}}}
    assert (call["env"], call["devnull"]) == ("eu-1", True)
    del user["exec"]["provideClusterInfo"]
    load_endpoint(None, kubeconfig(tmp_path, server.url, user))
    assert "cluster" not in plugin.calls()[-1]["info"]["spec"]


def test_interactive_modes_and_a_missing_plugin_with_its_install_hint(plugin):
    plugin.answer(credential("tok-1", version="v1beta1"))
    beta = spec(plugin, apiVersion="client.authentication.k8s.io/v1beta1", interactiveMode="")
    ExecPlugin(beta, stdin_is_tty=lambda: False).credentials()
    assert plugin.calls()[-1]["info"]["spec"]["interactive"] is False
    with pytest.raises(RuntimeError, match="interactiveMode Always, but standard input is not a terminal"):
        ExecPlugin(spec(plugin, interactiveMode="Always"), stdin_is_tty=lambda: False).credentials()
    missing = spec(plugin, command="/nowhere/cloud-auth", installHint="Install it: apt-get install cloud-auth\n")
    with pytest.raises(RuntimeError, match=r"executable /nowhere/cloud-auth not found: the credential plugin is not "
                                           r"installed; see https://kubernetes.io/.*\. Install it: apt-get install"):
        ExecPlugin(missing).credentials()


def test_a_token_in_the_kubeconfig_wins_over_the_plugin(plugin, server, tmp_path):
    plugin.answer({"exit": 1})
    endpoint = load_endpoint(None, kubeconfig(tmp_path, server.url, {"token": "static", "exec": spec(plugin)}))
    assert (endpoint.credentials().token, endpoint.plugin, plugin.calls()) == ("static", None, [])


def test_a_client_pair_from_the_plugin_rotates_with_its_tls_context(plugin, tmp_path):
    pki = tmp_path / "pki"
    make_pki(pki)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(pki / "apiserver.crt", pki / "apiserver.key")
    tls.load_verify_locations(pki / "ca.crt")
    tls.verify_mode = ssl.CERT_REQUIRED
    server = ApiServer(tls)
    try:
        pair = {name: ((pki / f"{name}.crt").read_text(), (pki / f"{name}.key").read_text())
                for name in ("admin", "kwok")}
        plugin.answer(credential(cert=pair["admin"][0], key=pair["admin"][1], expires=AT),
                      credential(cert=pair["kwok"][0], key=pair["kwok"][1]))
        clock = [T0]
        endpoint = Endpoint(context="prod", server=server.url, ca_pem=(pki / "ca.crt").read_text(),
                            plugin=ExecPlugin(spec(plugin), now=lambda: clock[0]))
        client = Api(endpoint)
        client.get("/api/v1/nodes/n")
        clock[0] = T0 + 61
        client.get("/api/v1/nodes/n")
        assert server.seen == ["ascend-npu-admin", "kwok-controller"]
    finally:
        server.close()
