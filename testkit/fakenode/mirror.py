"""An HTTP package mirror on loopback, serving a directory and counting what it served."""
from __future__ import annotations

import base64
import functools
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator


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


@contextmanager
def serve_directory(directory: Path, login: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """The mirror URL and the list of paths requested so far; with `login` (user:password) it asks for it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(directory)))
    server.served = []
    server.login = login
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.served
    finally:
        server.shutdown()
        server.server_close()
