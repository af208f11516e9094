"""A package mirror on loopback, serving a directory and counting what it served; HTTPS when it asks for a login.

A mirror with a login speaks HTTPS only (the stack refuses http:// with mirrorCredentials): its certificate is
issued for 127.0.0.1 by a CA made here, which the fake node's curl trusts (CURL_CA_BUNDLE, see node.py).
"""
from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import ssl
import tempfile
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, Optional

MIRROR_CA = "etc/ssl/ascend-npu-test-mirror-ca.pem"  # under the node's root


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class names it so
        self.server.served.append(self.path)

    def send_head(self):
        """Basic authentication when the mirror has a login: 401 without the right one."""
        login = self.server.login
        if login and self.headers.get("Authorization") != "Basic " + base64.b64encode(login.encode()).decode():
            self.send_error(401, "login required")
            return None
        return super().send_head()


def _tls_context(ca_file: Path) -> ssl.SSLContext:
    """A server context for 127.0.0.1 whose issuing CA is written to CA_FILE."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ascend-npu test mirror CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now)
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True).sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False).sign(ca_key, hashes.SHA256()))
    ca_file.parent.mkdir(parents=True, exist_ok=True)
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as scratch:
        pair = Path(scratch) / "server.pem"
        pair.write_bytes(leaf.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        context.load_cert_chain(pair)
    return context


@contextmanager
def serve_directory(directory: Path, login: str | None = None,
                    node_root: Optional[Path] = None) -> Iterator[tuple[str, list[str]]]:
    """The mirror URL and the list of paths requested so far; with `login` (user:password) it asks for it, over
    HTTPS trusted by the node at NODE_ROOT."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(directory)))
    server.served = []
    server.login = login
    scheme = "http"
    if login:
        if node_root is None:
            raise ValueError("a mirror with a login serves HTTPS: give the node's root so its curl trusts it")
        server.socket = _tls_context(node_root / MIRROR_CA).wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}", server.served
    finally:
        server.shutdown()
        server.server_close()
