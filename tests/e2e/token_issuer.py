"""Short-lived bearer tokens for one user: an exec credential plugin that issues them, and the TokenReview webhook
(kube-apiserver --authentication-token-webhook-config-file) that authenticates each one only until it expires."""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

USER, GROUP = "drain-robot", "ascend-npu:drain"
# Every token lives LIFE seconds. The first, third... answer says so in status.expirationTimestamp; the others
# say nothing, as some plugins do, so that only the API server's 401 tells the client to ask again.
PLUGIN = """#!{python}
import json, secrets, time
from datetime import datetime, timezone
with open({tokens!r}, "a+") as tokens:
    tokens.seek(0)
    n = len(tokens.readlines()) + 1
    token, expiry = f"t{{n}}-{{secrets.token_hex(8)}}", time.time() + {life}
    tokens.write(json.dumps({{"n": n, "token": token, "expiry": expiry, "issued": time.time()}}) + "\\n")
status = {{"token": token}}
if n % 2:
    status["expirationTimestamp"] = datetime.fromtimestamp(int(expiry), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}}))
"""


class TokenIssuer:
    """The plugin script and the webhook, both under FOLDER; `reviews` is every TokenReview answered."""

    def __init__(self, folder: Path, life: float):
        self.tokens, self.plugin = folder / "tokens.jsonl", folder / "issue-token"
        self.plugin.write_text(PLUGIN.format(python=sys.executable, tokens=str(self.tokens), life=life))
        self.plugin.chmod(0o755)
        self.reviews: list[dict] = []
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps(issuer.review(review)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def issued(self) -> list[dict]:
        return [json.loads(line) for line in self.tokens.read_text().splitlines()] if self.tokens.exists() else []

    def review(self, review: dict) -> dict:
        """A TokenReview answered: authenticated while the token has not expired."""
        spec, now = review.get("spec") or {}, time.time()
        token = next((t for t in self.issued() if t["token"] == spec.get("token")), None)
        valid = token is not None and now < token["expiry"]
        if token is not None:
            self.reviews.append({"n": token["n"], "at": now, "authenticated": valid,
                                 "past_expiry": round(now - token["expiry"], 1)})
        status: dict = {"authenticated": valid}
        if valid:
            status.update(user={"username": USER, "groups": [GROUP]}, audiences=spec.get("audiences") or [])
        return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "status": status}

    def webhook_config(self, path: Path) -> Path:
        """The kubeconfig kube-apiserver reads to reach this webhook."""
        url = f"http://127.0.0.1:{self.httpd.server_address[1]}/authenticate"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "webhook",
            "clusters": [{"name": "webhook", "cluster": {"server": url}}],
            "users": [{"name": "kube-apiserver", "user": {}}],
            "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "kube-apiserver"}}]}))
        return path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
