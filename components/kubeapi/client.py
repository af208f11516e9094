"""JSON over HTTPS to the API server of a kubeconfig context, stdlib only; each answer decoded or an ApiError."""
from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Iterator, Optional

from components.kubeapi.exec_plugin import Credentials
from components.kubeapi.kubeconfig import Endpoint

MERGE_PATCH = "application/merge-patch+json"


class ApiError(RuntimeError):
    """A non-2xx answer, or no answer at all (status 0), with the server's own message."""

    def __init__(self, status: int, message: str, reason: str = "", causes: tuple[str, ...] = ()):
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status, self.message, self.reason, self.causes = status, message, reason, causes


def _ssl_context(endpoint: Endpoint, creds: Credentials) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if endpoint.insecure:
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    elif endpoint.ca_pem:
        ctx.load_verify_locations(cadata=endpoint.ca_pem)
    if creds.cert_pem and creds.key_pem:
        # ssl reads a client pair only from files: a private one, gone as soon as it is read.
        with tempfile.TemporaryDirectory(prefix="ascend-npu-kube-") as folder:
            pair = os.path.join(folder, "client.pem")
            with open(os.open(pair, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(creds.cert_pem.rstrip("\n") + "\n" + creds.key_pem)
            ctx.load_cert_chain(pair)
    return ctx


class Api:
    """Calls to one API server; `timeout` bounds each call. An exec plugin's credential is renewed once it
    expires, and once after a 401 (the call is then made again, once)."""

    def __init__(self, endpoint: Endpoint, timeout: float = 30):
        self.endpoint, self.timeout = endpoint, timeout
        self._tls: Optional[tuple[tuple, ssl.SSLContext]] = None
        self._headers = {"Accept": "application/json", "User-Agent": "ascend-npu"}

    @property
    def server(self) -> str:
        return self.endpoint.server

    def _context(self, creds: Credentials) -> Optional[ssl.SSLContext]:
        """The TLS context for CREDS' client pair: built again when the plugin gave another pair."""
        if not self.endpoint.server.startswith("https:"):
            return None
        pair = (creds.cert_pem, creds.key_pem)
        if self._tls is None or self._tls[0] != pair:
            self._tls = (pair, _ssl_context(self.endpoint, creds))
        return self._tls[1]

    def _authorization(self, creds: Credentials) -> dict:
        if creds.token:
            return {"Authorization": f"Bearer {creds.token}"}
        if self.endpoint.basic:
            return {"Authorization": "Basic " + base64.b64encode(":".join(self.endpoint.basic).encode()).decode()}
        return {}

    def _send(self, method: str, url: str, data: Optional[bytes], headers: dict, creds: Credentials,
              timeout: float) -> str:
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={**self._headers, **headers, **self._authorization(creds)})
        try:
            with urllib.request.urlopen(req, context=self._context(creds), timeout=timeout) as resp:
                return resp.read().decode()
        except urllib.error.HTTPError as err:
            raise _api_error(err.code, err.read().decode(errors="replace")) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise ApiError(0, f"the API server {self.endpoint.server} did not answer: {reason}") from None

    def call(self, method: str, path: str, data: Optional[bytes] = None, headers: Optional[dict] = None,
             timeout: Optional[float] = None) -> str:
        """One call, its answer as text; after a 401 the plugin is asked again and the call made once more."""
        url, headers, timeout = self.endpoint.server + path, headers or {}, timeout or self.timeout
        creds = self.endpoint.credentials()
        try:
            return self._send(method, url, data, headers, creds, timeout)
        except ApiError as err:
            fresh = self.endpoint.refreshed(creds) if err.status == 401 else None
            if fresh is None:
                raise
        return self._send(method, url, data, headers, fresh, timeout)

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                query: Optional[dict] = None) -> Any:
        if query:
            path += ("&" if "?" in path else "?") + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        text = self.call(method, path, data, {"Content-Type": content_type})
        return json.loads(text) if text else None

    def text(self, path: str) -> str:
        """A GET whose answer is not JSON (/metrics), as text."""
        return self.call("GET", path, headers={"Accept": "*/*"})

    def ready(self) -> bool:
        """True once /readyz answers `ok`."""
        return self.call("GET", "/readyz", headers={"Accept": "*/*"}, timeout=5).strip() == "ok"

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

    def create(self, path: str, body: dict) -> Any:
        """POST, None when the object already exists (409)."""
        try:
            return self.post(path, body)
        except ApiError as err:
            if err.status != 409:
                raise
            return None

    def delete(self, path: str) -> None:
        """DELETE, done too when there is nothing to delete (404)."""
        try:
            self.request("DELETE", path)
        except ApiError as err:
            if err.status != 404:
                raise


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 120, interval: float = 0.5) -> Any:
    """Poll PROBE until it returns something truthy; TimeoutError naming WHAT and the last error."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            found = probe()
            if found:
                return found
        except (OSError, ApiError, ValueError) as err:
            last = err
        time.sleep(interval)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s" + (f" (last error: {last})" if last else ""))


def _api_error(status: int, text: str) -> ApiError:
    """The Status object's message and reason when the server sent one, else the text itself."""
    try:
        doc = json.loads(text)
        causes = tuple(c.get("reason", "") for c in ((doc.get("details") or {}).get("causes") or [])
                       if isinstance(c, dict))
        return ApiError(status, doc.get("message") or text[:400], doc.get("reason") or "", causes)
    except (ValueError, AttributeError):
        return ApiError(status, text[:400])
