"""Wall time of a node's host steps over SSH on the fake node: the first install, a rerun that changes nothing,
and verify. The stand-in installers sleep a short, fixed time in place of the real ones' minutes."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from testkit.fakenode.node import FakeNode, missing_requirements
from testkit.fakenode.packages import build_packages

INSTALLER_SLEEP_S = 0.3


def _timed(node: FakeNode, spec, step: str) -> tuple[float, int]:
    """Seconds the step took and how many installers it ran; a failed step is an error, not a figure."""
    before = len(node.installer_calls())
    start = time.perf_counter()
    result = node.run_step(spec, step)
    seconds = round(time.perf_counter() - start, 3)
    if result.returncode != 0:
        raise RuntimeError(f"{step} failed on the fake node: {result.stderr.strip()}")
    return seconds, len(node.installer_calls()) - before


def measure_host_runs(installer_sleep: float = INSTALLER_SLEEP_S) -> dict:
    """Seconds of install (first run, then a no-change rerun) and verify on one fake node; prints nothing."""
    reason = missing_requirements()
    if reason:
        return {"skipped": reason}
    with tempfile.TemporaryDirectory(prefix="ascend-npu-bench-") as tmp:
        packages = build_packages(Path(tmp) / "packages")
        with FakeNode(Path(tmp) / "node", packages) as node:
            node.knob("installer-sleep", str(installer_sleep))
            spec = node.spec()
            first_s, first_installers = _timed(node, spec, "install")
            second_s, second_installers = _timed(node, spec, "install")
            verify_s, _ = _timed(node, spec, "verify")
    return {
        "installer_sleep_s": installer_sleep,
        "install_first_run_s": first_s,
        "install_first_run_installers": first_installers,
        "install_second_run_s": second_s,
        "install_second_run_installers": second_installers,
        "verify_s": verify_s,
    }
