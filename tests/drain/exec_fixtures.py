"""A scripted exec credential plugin and a loopback API server that accepts only the tokens it is told to."""
from __future__ import annotations

import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

# The plugin answers its Nth call with the Nth scripted answer (the last one over and over), records the
# KUBERNETES_EXEC_INFO it was given and whether its standard input is /dev/null, and exits with an answer's "exit".
PLUGIN = """#!{python}
import json, os, sys
folder = {folder!r}
calls = open(os.path.join(folder, "calls.jsonl"), "a+")
calls.seek(0)
n = len(calls.readlines())
given = {{name: os.environ.get(name) for name in ("KUBERNETES_EXEC_INFO", "REGION")}}
calls.write(json.dumps({{"info": json.loads(given["KUBERNETES_EXEC_INFO"]), "env": given["REGION"],
                         "devnull": os.path.samestat(os.fstat(0), os.stat(os.devnull))}}) + "\\n")
answers = json.load(open(os.path.join(folder, "answers.json")))
answer = answers[min(n, len(answers) - 1)]
if "exit" in answer:
    sys.exit(answer["exit"])
print(json.dumps(answer))
"""


class Plugin:
    """The plugin script in FOLDER; `answer` scripts what its calls print."""

    def __init__(self, folder: Path):
        self.folder, self.path = folder, folder / "get-token"
        self.path.write_text(PLUGIN.format(python=sys.executable, folder=str(folder)))
        self.path.chmod(0o755)

    def answer(self, *answers: dict) -> "Plugin":
        (self.folder / "answers.json").write_text(json.dumps(list(answers)))
        return self

    def calls(self) -> list[dict]:
        path = self.folder / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def credential(token: str = "", version: str = "v1", expires: Optional[str] = None, cert: str = "",
               key: str = "") -> dict:
    status = {k: v for k, v in (("token", token), ("expirationTimestamp", expires), ("clientCertificateData", cert),
                                ("clientKeyData", key)) if v}
    return {"apiVersion": f"client.authentication.k8s.io/{version}", "kind": "ExecCredential", "status": status}


class ApiServer:
    """GETs answered with a Node, once authenticated by a token in `accepted` or a client certificate."""

    def __init__(self, tls: Optional[ssl.SSLContext] = None):
        self.accepted: set[str] = set()
        self.seen: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                peer = self.connection.getpeercert() if tls else None
                who = dict(x[0] for x in peer["subject"])["commonName"] if peer else token
                outer.seen.append(who)
                ok = bool(peer) or token in outer.accepted
                body = {"kind": "Node", "metadata": {"name": "n"}} if ok else \
                    {"kind": "Status", "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized"}
                data = json.dumps(body).encode()
                self.send_response(200 if ok else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
