"""Stand-in for pulumi-command: SSH through the OpenSSH client, dialled and retried as v1.2.1's connection.go does."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/remote/connection.go (Dial,
# dialWithRetry) and commandOutputs.go (run); retry timing from pulumi/pulumi sdk go/common/util/retry/until.go.
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable

from .sshconfig import PROXY, TARGET, SSHError, host_block, join_host_port, parse_host_key

SSH = shutil.which("ssh") or "/usr/bin/ssh"
# setpriv (util-linux) asks for SIGTERM when the plugin dies, so no ssh master outlives a killed plugin; a
# preexec_fn doing the same would run Python in a child forked from gRPC's threads.
SETPRIV = [path, "--pdeathsig", "TERM"] if (path := shutil.which("setpriv")) else []
# Each running process, and whether Cancel ends it.
_live: dict[subprocess.Popen, bool] = {}
_live_lock = threading.Lock()
_cancelled = threading.Event()
# Connections v1.2.1 never closes, open until the plugin exits.
_held: list[subprocess.Popen] = []
Log = Callable[[str], None]


def spawn(args: list[str], cancellable: bool = True, **kwargs) -> subprocess.Popen:
    """Start a process; Cancel ends it if CANCELLABLE (a dial, a local command), else lets it run to its end."""
    proc = subprocess.Popen(SETPRIV + args, **kwargs)
    with _live_lock:
        _live[proc] = cancellable
    return proc


def settle(proc: subprocess.Popen) -> None:
    """A dial that succeeded: its connection outlives Cancel, as v1.2.1 closes no client on Cancel."""
    with _live_lock:
        if proc in _live:
            _live[proc] = False


def forget(proc: subprocess.Popen) -> None:
    with _live_lock:
        _live.pop(proc, None)


def cancelled() -> bool:
    return _cancelled.is_set()


def held_open() -> int:
    """How many dialled connections are still open that no operation uses any more."""
    with _live_lock:
        return sum(proc.poll() is None for proc in _held)


def uncancel() -> None:
    """A plugin starts uncancelled (in-process servers of the tests start one after another)."""
    _cancelled.clear()


def cancel_all() -> None:
    """Cancel as v1.2.1 takes it: pulumi-go-provider v1.3.0 middleware/cancel/cancel.go:40-96 only cancels the
    operations' contexts. A dial stops at its next wait (remote/connection.go:150-187) and a local command is
    killed (exec.CommandContext, local/commandOutputs.go:59,113); a remote command runs to its end and is recorded
    (session.Run ignores the context, remote/commandOutputs.go:95), and no connection is closed."""
    _cancelled.set()
    with _live_lock:
        procs = [proc for proc, cancellable in _live.items() if cancellable]
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


# util/util.go:32-53 LogOutput reads the logged streams with a bufio.Scanner at its default limit
# (bufio.MaxScanTokenSize, 64 KiB): at a longer line Scan stops and nothing reads the pipe again, so the session's
# next write blocks and session.Run never returns, even once the command ended (remote/commandOutputs.go:77-98;
# local/commandOutputs.go alike). Cancel does not end it either; only release_stalls() does, for the tests.
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
    # v1.2.1 remote/commandOutputs.go run (local/commandOutputs.go alike): the logged streams share one io.Pipe read
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


class Link:
    """One dialled connection to the target (through its proxy when it has one), left open as v1.2.1 leaves it."""

    def __init__(self, connection: dict, status: Log, keep_target: bool = True):
        self.connection, self.status, self.keep_target = connection, status, keep_target
        self.dir = tempfile.mkdtemp(prefix="cmd-standin-")
        self.config = os.path.join(self.dir, "config")
        self.masters: list[subprocess.Popen] = []
        self.proxy: subprocess.Popen | None = None

    def __enter__(self) -> Link:
        try:
            self._dial()
        except BaseException:
            self.close(keep_target=False)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close(self.keep_target)

    def close(self, keep_target: bool = False) -> None:
        """Close what v1.2.1 closes: never the proxy client (connection.go L211-242), the target client only after
        a copy (copyController.go L169-173), not after a command (commandOutputs.go L31-40). What stays open is
        held until the plugin exits (the masters die with it, --pdeathsig)."""
        for proc in reversed(self.masters):
            if proc is self.proxy or keep_target:
                with _live_lock:
                    _held.append(proc)
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            forget(proc)
        shutil.rmtree(self.dir, ignore_errors=True)

    def _dial(self) -> None:
        """Connection.Dial: the proxy first with its own dial limit, then the target; proxy errors start `proxy: `."""
        conn, proxy = self.connection, self.connection.get("proxy")
        blocks, envs = [], {}
        for alias, hop in ((TARGET, conn), (PROXY, proxy)):
            if hop:
                proxy_command = None
                if alias == TARGET and proxy:
                    proxy_command = (f"{SSH} -F {self.config} -o ControlMaster=no -W "
                                     f"{join_host_port(hop['host'], hop.get('port'))} {PROXY}")
                try:
                    block, envs[alias] = host_block(self.dir, alias, hop, proxy_command)
                except SSHError as err:
                    if alias == PROXY:
                        raise SSHError(f"proxy: {err}") from None
                    raise
                blocks.append(block)
        with open(self.config, "w") as f:
            f.write("\n".join(blocks))
        if proxy:
            try:
                self._dial_hop(PROXY, proxy, "Dial proxy", envs[PROXY])
            except SSHError as err:
                raise SSHError(f"proxy: {err}") from None
            self.proxy = self.masters[-1]
        try:
            self._dial_hop(TARGET, conn, "Dial", envs[TARGET])
        except SSHError as err:
            raise SSHError(f"proxy: {err}" if proxy else str(err)) from None

    def _dial_hop(self, alias: str, hop: dict, what: str, env: dict) -> None:
        """dialWithRetry: waits of 0.1 s growing x1.5 to at most 5 s; the limit counts failures after the first."""
        limit = int(hop["dialErrorLimit"]) if hop.get("dialErrorLimit") is not None else 10  # -1: unlimited
        delay, tries = 0.1, 0
        while True:
            err = self._start_master(alias, hop, env)
            if err is None:
                return
            dials = tries + 1
            if cancelled():  # retry.Until's wait returns on the cancelled context
                raise SSHError(f"after {tries} failed attempts: context canceled")
            if limit > -1 and dials > limit:
                raise SSHError(f"after {tries} failed attempts: {err}")
            self.status(f"{what} {dials}/{'inf' if limit == -1 else limit} failed: retrying")
            time.sleep(min(delay, 5.0))
            delay = min(delay, 5.0) * 1.5
            tries += 1

    def _start_master(self, alias: str, hop: dict, env: dict) -> str | None:
        """One dial: an OpenSSH control master; its socket appears once the login succeeded."""
        sock = os.path.join(self.dir, f"{alias}.sock")
        with open(os.path.join(self.dir, f"{alias}.err"), "w+b") as err:
            # A master forwards only the env its own SendEnv allows; with -N it opens no session of its own. Its
            # LogLevel INFO keeps OpenSSH's "Unable to negotiate ..." line, which dial_error words as x/crypto does.
            proc = spawn([SSH, "-F", self.config, "-M", "-N", "-T", "-o", "ControlPersist=no", "-o", "SendEnv=*",
                          "-o", "LogLevel=INFO", alias], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=err, env=env)
            while not os.path.exists(sock):
                if proc.poll() is not None:
                    forget(proc)
                    err.seek(0)
                    return dial_error(err.read().decode(errors="replace"), hop)
                time.sleep(0.02)
        settle(proc)
        self.masters.append(proc)
        return None

    def alive(self) -> bool:
        return bool(self.masters) and self.masters[-1].poll() is None

    def client(self, options: list[str], remote: list[str], env: dict | None = None, **kwargs) -> subprocess.Popen:
        """An SSH client process that reuses the dialled connection (a session, or the sftp subsystem)."""
        # `--` stops OpenSSH from reading a command that starts with `-` as options.
        return spawn([SSH, "-F", self.config, "-T", "-o", "ControlMaster=no", *options, "--", TARGET, *remote],
                     env=env, **kwargs)

    def run(self, command: str, stdin: str | None, env: dict[str, str], logged: tuple[str, ...], log: Log
            ) -> Result:
        """One session with env requests and stdin; stdout and stderr kept apart and together, logged lines to log."""
        names = " ".join(env)
        child_env = {**os.environ, **env}
        extra = ["-o", f"SendEnv={names}"] if names else []
        proc = self.client(extra, [command], env=child_env, cancellable=False,
                           stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            return collect(proc, stdin, logged, log)
        finally:
            forget(proc)


def dial_error(stderr: str, hop: dict) -> str:
    """OpenSSH's refusal in the words of golang.org/x/crypto/ssh where it can be told, OpenSSH's own line after."""
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("@")]
    last = lines[-1].strip() if lines else "ssh exited with status 255"
    where = join_host_port(hop["host"], hop.get("port"))
    if "Host key verification failed" in stderr:
        said = "ssh: handshake failed: ssh: host key mismatch"
    elif "no matching host key type" in stderr:
        said = "ssh: handshake failed: ssh: no common algorithm for host key" + host_key_offers(stderr, hop)
    elif "Permission denied" in stderr:
        said = "ssh: handshake failed: ssh: unable to authenticate, no supported methods remain"
    elif "Connection refused" in stderr:
        said = f"dial tcp {where}: connect: connection refused"
    elif "timed out" in stderr:
        said = f"dial tcp {where}: i/o timeout"
    else:
        return f"ssh: {last}"
    return f"{said} (OpenSSH: {last})"


def host_key_offers(stderr: str, hop: dict) -> str:
    """`; we offered: [...], peer offered: [...]` as x/crypto's AlgorithmNegotiationError says it (common.go:422)."""
    theirs = stderr.split("Their offer:", 1)[1].split()[0].split(",") if "Their offer:" in stderr else []
    ours = [parse_host_key(hop["hostKey"])[0]] if hop.get("hostKey") else []
    return f"; we offered: [{' '.join(ours)}], peer offered: [{' '.join(theirs)}]"

