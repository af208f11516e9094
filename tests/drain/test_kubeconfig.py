"""The kubeconfig context the drain uses is the one kubectl and the kubernetes provider would use."""
from __future__ import annotations

import base64
import json
import stat

import pytest
import yaml

from components.kubeapi.kubeconfig import KubeconfigError, load_endpoint

CA = "-----BEGIN CERTIFICATE-----\nMIIBfake-ca\n-----END CERTIFICATE-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nMIIBfake-client\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcfake-key\n-----END EC PRIVATE KEY-----\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def admin_conf(server: str = "https://10.20.0.2:6443", context: str = "kubernetes-admin@prod") -> dict:
    """The shape kubeadm writes to /etc/kubernetes/admin.conf."""
    return {"apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
            "clusters": [{"name": "prod", "cluster": {"server": server, "certificate-authority-data": b64(CA)}}],
            "users": [{"name": "kubernetes-admin", "user": {"client-certificate-data": b64(CERT),
                                                            "client-key-data": b64(KEY)}}],
            "contexts": [{"name": context, "context": {"cluster": "prod", "user": "kubernetes-admin"}}]}


def write(path, doc: dict):
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_current_context_of_a_kubeadm_admin_conf(tmp_path):
    path = write(tmp_path / "admin.conf", admin_conf())
    endpoint = load_endpoint(None, {"KUBECONFIG": str(path)})
    assert (endpoint.context, endpoint.server) == ("kubernetes-admin@prod", "https://10.20.0.2:6443")
    assert (endpoint.ca_pem, endpoint.cert_pem, endpoint.key_pem) == (CA, CERT, KEY)
    assert "MHcfake-key" not in repr(endpoint.token)


def test_kubeconfig_files_merge_first_wins_and_relative_paths_follow_their_file(tmp_path):
    first = admin_conf("https://first:6443")
    second = admin_conf("https://second:6443")
    second["current-context"] = "other"
    second["contexts"].append({"name": "edge", "context": {"cluster": "edge", "user": "robot"}})
    second["clusters"].append({"name": "edge", "cluster": {"server": "https://edge:6443",
                                                            "certificate-authority": "pki/ca.crt"}})
    second["users"].append({"name": "robot", "user": {"tokenFile": "robot.token"}})
    (tmp_path / "b").mkdir()
    (tmp_path / "b/pki").mkdir()
    (tmp_path / "b/pki/ca.crt").write_text(CA)
    (tmp_path / "b/robot.token").write_text("tok-123\n")
    env = {"KUBECONFIG": f"{write(tmp_path / 'a.yaml', first)}:{write(tmp_path / 'b/c.yaml', second)}"}
    assert load_endpoint(None, env).server == "https://first:6443"  # current-context and cluster: first file's
    edge = load_endpoint("edge", env)
    assert (edge.server, edge.ca_pem, edge.token) == ("https://edge:6443", CA, "tok-123")


def test_an_unknown_context_names_the_ones_there_are(tmp_path):
    env = {"KUBECONFIG": str(write(tmp_path / "k", admin_conf()))}
    with pytest.raises(KubeconfigError, match=r"context 'staging' is not in .*kubernetes-admin@prod"):
        load_endpoint("staging", env)
    with pytest.raises(KubeconfigError, match="no kubeconfig"):
        load_endpoint(None, {"KUBECONFIG": str(tmp_path / "absent")})


def test_an_exec_credential_plugin_gives_the_token(tmp_path):
    plugin = tmp_path / "get-token"
    answer = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
              "status": {"token": "exec-token", "expirationTimestamp": "2026-12-02T06:00:00Z"}}
    plugin.write_text(f"#!/bin/sh\n[ \"$CLUSTER\" = prod ] || exit 7\necho '{json.dumps(answer)}'\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    doc = admin_conf()
    doc["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                                        "env": [{"name": "CLUSTER", "value": "prod"}], "args": [],
                                        "interactiveMode": "Never"}}
    endpoint = load_endpoint(None, {"KUBECONFIG": str(write(tmp_path / "k", doc))})
    assert endpoint.credentials().token == "exec-token" and endpoint.credentials().cert_pem is None
    doc["users"][0]["user"]["exec"]["env"] = []
    with pytest.raises(KubeconfigError, match="get-token failed with exit code 7"):
        load_endpoint(None, {"KUBECONFIG": str(write(tmp_path / "k", doc))})


def test_an_auth_provider_is_refused_with_what_to_use_instead(tmp_path):
    doc = admin_conf()
    doc["users"][0]["user"] = {"auth-provider": {"name": "oidc", "config": {}}}
    with pytest.raises(KubeconfigError, match="auth-provider 'oidc' is not supported; use an exec"):
        load_endpoint(None, {"KUBECONFIG": str(write(tmp_path / "k", doc))})
