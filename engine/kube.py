"""A small client for the local API server: JSON over HTTPS with the admin's client certificate, stdlib only."""
from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional


class ApiError(RuntimeError):
    """A non-2xx answer from the API server, with its status code."""

    def __init__(self, status: int, text: str):
        super().__init__(f"HTTP {status}: {text[:400]}")
        self.status = status


@dataclass(frozen=True)
class Kube:
    """The API server at `server`, reached with the PEM files in `pki` (ca.crt, admin.crt, admin.key)."""

    server: str
    pki: Path

    def _context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        return ctx

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                timeout: float = 30) -> Any:
        """One call; the decoded JSON answer, ApiError on any status but 2xx."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self._context(), timeout=timeout) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as exc:
            raise ApiError(exc.code, exc.read().decode(errors="replace")) from None
        return json.loads(text) if text else None

    def text(self, path: str) -> str:
        """A GET whose answer is not JSON (/metrics, /readyz), as text."""
        req = urllib.request.Request(self.server + path)
        with urllib.request.urlopen(req, context=self._context(), timeout=30) as resp:
            return resp.read().decode()

    def ready(self) -> bool:
        """True once /readyz answers `ok`."""
        req = urllib.request.Request(self.server + "/readyz")
        with urllib.request.urlopen(req, context=self._context(), timeout=5) as resp:
            return resp.read().strip() == b"ok"

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def find(self, path: str) -> Optional[dict]:
        """The object at `path`, or None when it does not exist."""
        try:
            return self.get(path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def create(self, path: str, body: dict) -> Any:
        """POST, tolerating an object that already exists (409)."""
        try:
            return self.request("POST", path, body)
        except ApiError as exc:
            if exc.status != 409:
                raise
            return None

    def merge_patch(self, path: str, body: dict) -> Any:
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def delete(self, path: str) -> None:
        try:
            self.request("DELETE", path)
        except ApiError as exc:
            if exc.status != 404:
                raise

    def items(self, path: str) -> list[dict]:
        return self.get(path).get("items", [])


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 120, interval: float = 0.5) -> Any:
    """Poll `probe` until it returns something truthy; TimeoutError naming `what` and the last error."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            found = probe()
            if found:
                return found
        except (OSError, ApiError, ValueError) as exc:
            last = exc
        time.sleep(interval)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s" + (f" (last error: {last})" if last else ""))
