"""JSON over HTTPS to the API server of a kubeconfig context, stdlib only; each answer decoded or an ApiError."""
from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterator, Optional

from components.kubeapi.kubeconfig import Endpoint

MERGE_PATCH = "application/merge-patch+json"


class ApiError(RuntimeError):
    """A non-2xx answer, or no answer at all (status 0), with the server's own message."""

    def __init__(self, status: int, message: str, reason: str = "", causes: tuple[str, ...] = ()):
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status, self.message, self.reason, self.causes = status, message, reason, causes


def _ssl_context(endpoint: Endpoint) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if endpoint.insecure:
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    elif endpoint.ca_pem:
        ctx.load_verify_locations(cadata=endpoint.ca_pem)
    if endpoint.cert_pem and endpoint.key_pem:
        # ssl reads a client pair only from files: a private one, gone as soon as it is read.
        with tempfile.TemporaryDirectory(prefix="ascend-npu-kube-") as folder:
            pair = os.path.join(folder, "client.pem")
            with open(os.open(pair, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(endpoint.cert_pem.rstrip("\n") + "\n" + endpoint.key_pem)
            ctx.load_cert_chain(pair)
    return ctx


class Api:
    """Calls to one API server; `timeout` bounds each call."""

    def __init__(self, endpoint: Endpoint, timeout: float = 30):
        self.endpoint, self.timeout = endpoint, timeout
        self._ctx = _ssl_context(endpoint) if endpoint.server.startswith("https:") else None
        self._headers = {"Accept": "application/json", "User-Agent": "ascend-npu"}
        if endpoint.token:
            self._headers["Authorization"] = f"Bearer {endpoint.token}"
        elif endpoint.basic:
            pair = base64.b64encode(":".join(endpoint.basic).encode()).decode()
            self._headers["Authorization"] = f"Basic {pair}"

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                query: Optional[dict] = None) -> Any:
        url = self.endpoint.server + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={**self._headers, "Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, context=self._ctx, timeout=self.timeout) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as err:
            raise _api_error(err.code, err.read().decode(errors="replace")) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise ApiError(0, f"the API server {self.endpoint.server} did not answer: {reason}") from None
        return json.loads(text) if text else None

    def get(self, path: str, **query: str) -> Any:
        return self.request("GET", path, query=query or None)

    def find(self, path: str) -> Optional[dict]:
        """The object at PATH, or None when there is none."""
        try:
            return self.get(path)
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def items(self, path: str, **query: str) -> Iterator[dict]:
        """Every item of a list, page by page (500 a page)."""
        query = {"limit": "500", **query}
        while True:
            page = self.get(path, **query)
            yield from page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            query["continue"] = token

    def merge_patch(self, path: str, body: dict) -> Any:
        return self.request("PATCH", path, body, content_type=MERGE_PATCH)

    def post(self, path: str, body: dict) -> Any:
        return self.request("POST", path, body)


def _api_error(status: int, text: str) -> ApiError:
    """The Status object's message and reason when the server sent one, else the text itself."""
    try:
        doc = json.loads(text)
        causes = tuple(c.get("reason", "") for c in ((doc.get("details") or {}).get("causes") or [])
                       if isinstance(c, dict))
        return ApiError(status, doc.get("message") or text[:400], doc.get("reason") or "", causes)
    except (ValueError, AttributeError):
        return ApiError(status, text[:400])
