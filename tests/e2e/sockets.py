"""The TCP connections of a rollout, sampled from the kernel's table while `pulumi up` runs: how many this machine
holds to the nodes (or the bastion) at once, and how many the bastion holds to the nodes. Every part runs in this
machine's network namespace on loopback, so one table holds both ends of each connection."""
from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

ESTABLISHED = "01"


def established(table: str) -> Counter:
    """Established connections of TABLE (/proc/net/tcp text), counted by (local port, remote port) side: the key is
    ('to', port) for a connection's client end and ('at', port) for its server end."""
    counts: Counter = Counter()
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == ESTABLISHED:
            counts[("at", int(fields[1].rsplit(":", 1)[1], 16))] += 1
            counts[("to", int(fields[2].rsplit(":", 1)[1], 16))] += 1
    return counts


class Peak:
    """`with Peak({"nodes": port}) as peak: ...; peak.most["nodes"]`: the most client ends to each port at once."""

    def __init__(self, ports: dict[str, int], every: float = 0.02):
        self.ports, self.every = ports, every
        self.most = {name: 0 for name in ports}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            counts = established(Path("/proc/net/tcp").read_text())
            for name, port in self.ports.items():
                self.most[name] = max(self.most[name], counts[("to", port)])
            self.samples += 1
            time.sleep(self.every)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def now(self, name: str) -> int:
        return established(Path("/proc/net/tcp").read_text())[("to", self.ports[name])]
