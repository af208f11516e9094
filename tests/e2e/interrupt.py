"""A `pulumi up` run in the background and stopped the ways rollouts really stop: one ^C (SIGINT to the CLI), or
the whole process tree killed outright (a cancelled CI job, a machine gone); and what the state then holds."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from components.kubeapi.client import wait_for
from engine.cache import BIN
from engine.pulumi_cli import ProgramHost
from testkit.fakenode.sandbox import LOGS
from tests.e2e.world import STACK, Run, World

UP = ("up", "--stack", STACK, "--yes", "--skip-preview", "--non-interactive")


@dataclass
class Background:
    """One `pulumi up` running in its own process group, its output read as it comes."""

    world: World
    proc: subprocess.Popen
    host: ProgramHost
    started: float
    lines: list[str] = field(default_factory=list)

    @classmethod
    def up(cls, world: World) -> Background:
        env = world.env()
        host = ProgramHost(cwd=world.project, env=env).__enter__()
        proc = subprocess.Popen([str(BIN / "pulumi"), *UP, "--client", host.address], cwd=world.project, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        running = cls(world, proc, host, time.monotonic())
        threading.Thread(target=lambda: running.lines.extend(proc.stdout), daemon=True).start()
        return running

    def once(self, what: str, probe: Callable[[], object], timeout: float = 300) -> None:
        """Wait until PROBE holds while `up` still runs; fail if `up` ended first."""
        wait_for(what, lambda: self.proc.poll() is not None or probe(), timeout)
        assert self.proc.poll() is None, f"`up` ended before {what}:\n{''.join(self.lines)[-4000:]}"

    def interrupt(self) -> None:
        """One ^C: the engine stops scheduling and asks every provider to cancel."""
        os.kill(self.proc.pid, signal.SIGINT)

    def kill_all(self) -> None:
        """The CLI and every plugin it started, killed outright, as a CI runner ends a job: every process of the
        CLI's session (the plugins have process groups of their own: pulumi sdk v3.274.0
        go/common/util/cmdutil/child_unix.go L52, go/common/resource/plugin/plugin.go L598)."""
        for pid in session_members(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def finish(self, timeout: float = 600) -> Run:
        """The run once it has ended, recorded in the world's runs and log as any other."""
        code = self.proc.wait(timeout=timeout)
        self.host.__exit__(None, None, None)
        time.sleep(0.2)  # the reader thread takes the last lines
        run = Run(list(UP), code, "".join(self.lines), time.monotonic() - self.started)
        self.world.runs.append(run)
        with (self.world.root / "pulumi.log").open("a") as log:
            log.write(f"\n$ pulumi {' '.join(UP)}  (background, exit {code}, {run.seconds:.1f} s)\n{run.out}\n")
        print(f"e2e: pulumi up (background): exit {code} in {run.seconds:.1f} s", flush=True)
        return run


def session_members(session: int) -> list[int]:
    """The pids of every process in SESSION (field 6 of /proc/PID/stat)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session:
            found.append(int(stat.parent.name))
    return found


def pending_operations(world: World) -> list[tuple[str, str]]:
    """What `pulumi stack export` says was under way when the last `up` stopped: (type, resource name)."""
    state = json.loads(world.pulumi("stack", "export", "--stack", STACK, program=False).out)
    return sorted((op["type"], op["resource"]["urn"].rsplit("::", 1)[1])
                  for op in state["deployment"].get("pending_operations") or [])


def installer_runs(world: World, name: str) -> list[str]:
    """The kinds of installer the node ran, in order (the fake installer's own log)."""
    log = world.nodes[name].root / LOGS / "installer-starts.log"
    return [line.split()[1] for line in log.read_text().splitlines()] if log.exists() else []


def run_in_progress(world: World, name: str) -> bool:
    """Whether a run of ours still holds the node's lock: the holder's pid alive (the node's processes are local)."""
    holder = world.nodes[name].root / "var/lib/ascend-npu/run.lock.holder"
    fields = dict(line.split("=", 1) for line in holder.read_text().splitlines() if "=" in line) \
        if holder.exists() else {}
    return bool(fields.get("pid")) and Path(f"/proc/{fields['pid']}").exists()
