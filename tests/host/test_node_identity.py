"""Preflight tells which Node a host is from its kubelet's client certificate, and refuses a stack that names it
otherwise. Simulated: the certificate (made here as the kubelet's CSR and the cluster CA would make it)."""
from __future__ import annotations

import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .python_parts import part

CERT = "var/lib/kubelet/pki/kubelet-client-current.pem"
kubelet_identity = part("kubelet_identity")


def kubelet_pair(node_name: str, organization: str = "system:nodes", prefix: str = "system:node:") -> str:
    """What the kubelet keeps in kubelet-client-current.pem: its leaf certificate from the cluster CA, then its key."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                         x509.NameAttribute(NameOID.COMMON_NAME, prefix + node_name)])
    cert = (x509.CertificateBuilder().subject_name(subject)
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")]))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=365))
            .sign(ca_key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return (cert.public_bytes(serialization.Encoding.PEM) + key_pem).decode()


def test_the_node_name_is_the_subject_of_the_kubelets_certificate():
    assert kubelet_identity.node_name(kubelet_pair("train-01.prod.corp.example")) == "train-01.prod.corp.example"
    assert kubelet_identity.node_name(kubelet_pair("x", prefix="")) is None  # issuer CN=kubernetes is not the subject
    assert kubelet_identity.node_name(kubelet_pair("", prefix="system:node:")) is None
    assert kubelet_identity.node_name("-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----") is None
    assert kubelet_identity.node_name("") is None


def write_cert(node, text: str) -> None:
    path = node.root / CERT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_host_registered_under_the_stacks_name_passes(node):
    spec = node.spec()
    write_cert(node, kubelet_pair(spec.nodes[0].name))
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    assert "kubelet" not in result.stdout + result.stderr


def test_a_host_registered_under_another_name_is_refused_before_any_installer(node):
    spec = node.spec()
    write_cert(node, kubelet_pair("gpu-node-7"))
    result = node.run_step(spec, "install")
    assert result.returncode != 0
    assert (f"this host's kubelet is Node gpu-node-7, but the stack names it {spec.nodes[0].name}: write name: "
            "gpu-node-7 for this node, or check its address") in result.stderr
    assert "no installer ran" in result.stderr and node.installer_calls() == []


def test_a_host_without_a_kubelet_certificate_is_noted_and_installed(node):
    spec = node.spec()
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    assert (f"note: no kubelet client certificate at /{CERT}, so which Node this host is cannot be told here; "
            f"it must already be Node {spec.nodes[0].name}") in result.stdout + result.stderr
