"""Stand-in for pulumi-command: the processes a command runs, their output read as v1.2.1 reads it, and Cancel."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/local/commandOutputs.go (run) and
# util/util.go (LogOutput), and pulumi/pulumi-go-provider v1.3.0 middleware/cancel/cancel.go.
from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass
from typing import Callable

# setpriv (util-linux) asks for SIGTERM when the plugin dies, so no command outlives a killed plugin; a preexec_fn
# doing the same would run Python in a child forked from gRPC's threads.
SETPRIV = [path, "--pdeathsig", "TERM"] if (path := shutil.which("setpriv")) else []
# Each running process, and whether Cancel ends it.
_live: dict[subprocess.Popen, bool] = {}
_live_lock = threading.Lock()
_cancelled = threading.Event()
Log = Callable[[str], None]


def spawn(args: list[str], cancellable: bool = True, **kwargs) -> subprocess.Popen:
    """Start a process; Cancel ends it if CANCELLABLE (a local command), else lets it run to its end."""
    proc = subprocess.Popen(SETPRIV + args, **kwargs)
    with _live_lock:
        _live[proc] = cancellable
    return proc


def forget(proc: subprocess.Popen) -> None:
    with _live_lock:
        _live.pop(proc, None)


def cancelled() -> bool:
    return _cancelled.is_set()


def uncancel() -> None:
    """A plugin starts uncancelled (in-process servers of the tests start one after another)."""
    _cancelled.clear()


def cancel_all() -> None:
    """Cancel as v1.2.1 takes it: pulumi-go-provider v1.3.0 middleware/cancel/cancel.go:40-96 only cancels the
    operations' contexts, and a local command is killed (exec.CommandContext, local/commandOutputs.go:59,113)."""
    _cancelled.set()
    with _live_lock:
        procs = [proc for proc, cancellable in _live.items() if cancellable]
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


# util/util.go:32-53 LogOutput reads the logged streams with a bufio.Scanner at its default limit
# (bufio.MaxScanTokenSize, 64 KiB): at a longer line Scan stops and nothing reads the pipe again, so the command's
# next write blocks and the run never returns, even once the command ended (local/commandOutputs.go:56-106; the
# remote commandOutputs.go:77-98 alike). Cancel does not end it either; only release_stalls() does, for the tests.
MAX_LINE = 64 * 1024
_stalls: set[threading.Event] = set()


def stall(proc: subprocess.Popen) -> None:
    """Stop reading PROC's output as v1.2.1 does after a line over MAX_LINE, until release_stalls()."""
    released = threading.Event()
    with _live_lock:
        _stalls.add(released)
    released.wait()
    proc.kill()


def release_stalls() -> None:
    """End every command stalled on a long line (for the tests: v1.2.1 has no way out)."""
    with _live_lock:
        stalls = list(_stalls)
        _stalls.clear()
    for released in stalls:
        released.set()


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    combined: str


def collect(proc: subprocess.Popen, stdin: str | None, logged: tuple[str, ...], log: Log) -> Result:
    """Feed stdin, read stdout and stderr apart and together, wait for the exit; the LOGGED streams go to LOG a line
    at a time as they arrive."""
    # v1.2.1 local/commandOutputs.go run (remote/commandOutputs.go alike): the logged streams share one io.Pipe read
    # by util/util.go LogOutput, a bufio.Scanner whose lines (one trailing \r dropped, the last one even without its
    # \n) each become an InfoStatus; the pipe holds nothing back, so a line is logged as soon as it is complete.
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    combined: list[bytes] = []
    lock = threading.Lock()
    pending = bytearray()

    def emit(line: bytes) -> None:
        log(line.removesuffix(b"\r").decode(errors="replace"))

    def pump(name: str, stream) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            with lock:
                chunks[name].append(chunk)
                combined.append(chunk)
                stuck = False
                if name in logged:
                    pending.extend(chunk)
                    *lines, rest = bytes(pending).split(b"\n")
                    pending[:] = rest
                    for line in lines:
                        stuck = len(line) >= MAX_LINE  # the line and its \n do not fit the Scanner's buffer
                        if stuck:
                            break
                        emit(line)
                    stuck = stuck or len(pending) >= MAX_LINE
            if stuck:
                stall(proc)
                return

    def feed() -> None:
        try:
            proc.stdin.write(stdin.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

    threads = [threading.Thread(target=pump, args=(n, s), daemon=True)
               for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    if stdin:
        threads.append(threading.Thread(target=feed, daemon=True))
    for t in threads:
        t.start()
    code = proc.wait()
    for t in threads:
        t.join()
    if pending:
        emit(bytes(pending))
    proc.stdout.close()
    proc.stderr.close()
    def text(parts: list) -> str:
        return b"".join(parts).decode(errors="replace")

    return Result(code, text(chunks["stdout"]), text(chunks["stderr"]), text(combined))
