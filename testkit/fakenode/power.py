"""The fake node's power and SSH listener, as systemd on a real server handles them (opt-in: FakeNode.power_on()).

Simulated: the machine itself. `systemctl stop ssh.socket|ssh.service|sshd.service` stops the listener and keeps the
sessions (Debian's ssh.service has KillMode=process); `systemctl start` of one starts it again; `systemctl reboot`
kills every process of the node (its sshd and every login's processes, found by the marker in their environment),
keeps it down `reboot-down-seconds` (knob; `reboot-stays-down` keeps it down), then boots it: a new boot id, the
boot time in knob `booted-at` (npu-smi answers only `driver-load-seconds` after it, as a driver still loading), sshd
listening again. The systemctl stand-in asks by a file in REQUESTS; stop and start wait until they are done.
"""
from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

REQUESTS = "fake/power"
MARKER = "ASCEND_FAKE_NODE"
UNITS = ("ssh.socket", "ssh.service", "sshd.service")


def ask(root: Path, action: str, wait: bool) -> None:
    """From the node (the systemctl stand-in): ACTION (`stop-ssh`, `start-ssh`, `reboot`), waiting until it is done."""
    folder = root / REQUESTS
    request = folder / f"{time.time_ns()}-{action}"
    # Whole or not at all: the power supply reads a request as soon as its name appears.
    scratch = folder / f".{request.name}"
    scratch.write_text(action)
    os.replace(scratch, request)
    deadline = time.monotonic() + 20
    while wait and request.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def processes_of(root: Path) -> list[int]:
    """Every process of the node: its sshd (MARKER) and each login's processes (sshd's SetEnv ASCEND_ROOT)."""
    marks = (f"{MARKER}={root}\0".encode(), f"ASCEND_ROOT={root}\0".encode())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(mark in environ for mark in marks):
            found.append(int(entry.name))
    return found


class PowerSupply:
    """Serves one node's power requests on a thread: `stop_listener`, `start_listener` are the node's sshd."""

    def __init__(self, root: Path, stop_listener: Callable[[], None], start_listener: Callable[[], None]):
        self.root, self.stop_listener, self.start_listener = root, stop_listener, start_listener
        self.events: list[str] = []
        self._quit = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> None:
        (self.root / REQUESTS).mkdir(parents=True, exist_ok=True)
        self._thread.start()

    def stop(self) -> None:
        self._quit.set()
        self._thread.join(timeout=30)

    def knob(self, name: str) -> str | None:
        path = self.root / "fake/knobs" / name
        return path.read_text().strip() if path.exists() else None

    def _serve(self) -> None:
        while not self._quit.wait(0.02):
            for request in sorted((self.root / REQUESTS).glob("[!.]*")):
                action = request.read_text().strip()
                self.events.append(action)
                if action == "stop-ssh":
                    self.stop_listener()
                elif action == "start-ssh":
                    self.start_listener()
                elif action == "reboot":
                    self._reboot()
                request.unlink()

    def _reboot(self) -> None:
        time.sleep(0.2)  # systemd takes a moment before it stops everything
        self.stop_listener()
        for pid in processes_of(self.root):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.events.append("down")
        if self.knob("reboot-stays-down"):
            return
        self._quit.wait(float(self.knob("reboot-down-seconds") or "2"))
        (self.root / "proc/sys/kernel/random/boot_id").write_text(str(uuid.uuid4()) + "\n")
        (self.root / "fake/knobs/booted-at").write_text(f"{time.time()}\n")
        if not self._quit.is_set():
            self.start_listener()
            self.events.append("up")
