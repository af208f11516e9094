"""What a host step prints while it runs, over real SSH on the fake node: its log's path first, then one line per
sub-step as it happens (an installer's start and end, a skip, a fetch, the engine config and its restart), the same
lines in the node's run log, and never the mirror login."""
from __future__ import annotations

import hashlib
import re
import threading
import time

from components.config import parse_stack
from components.host import mirror_login_stdin, node_packages
from testkit.fakenode.mirror import serve_directory
from testkit.fakenode.packages import NEW, stack_config

RUN_LOG = "/var/log/ascend-npu/run.log"
INSTALL_LOG_LINE = f"log on the node: {RUN_LOG} (each installer's output: /var/log/ascend-npu/<kind>.log)"


def said(text: str, step: str = "install") -> list[str]:
    """The step's lines without their `[step] ` prefix."""
    return [line.removeprefix(f"[{step}] ") for line in text.splitlines()]


def files(spec) -> dict[str, str]:
    return {pkg.kind.value: pkg.file for pkg in node_packages(spec, spec.nodes[0])}


def installer_lines(kind: str, file: str, flags: str, scratch: str = "") -> list[str]:
    return [re.escape(f"{kind}: installer started ({file} {flags}{scratch})"),
            re.escape(f"{kind} {NEW['cann' if kind in ('toolkit', 'kernels') else kind]} installed with {flags} in ")
            + r"\d+ s"]


def test_install_prints_each_sub_step_in_order_and_the_run_log_keeps_every_line(node):
    node.preinstall({"driver": NEW["driver"], "firmware": NEW["firmware"]})
    original = "version = 2\n"
    node.path("/etc/containerd").mkdir(parents=True)
    node.path("/etc/containerd/config.toml").write_text(original)
    node.knob("restart-sleep", "1")
    spec = node.spec()
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    package = files(spec)
    backup = "/etc/containerd/config.toml.bak." + hashlib.sha256(original.encode()).hexdigest()[:12]
    expected = [re.escape(INSTALL_LOG_LINE),
                r"note: no kubelet client certificate at /var/lib/kubelet/pki/kubelet-client-current\.pem, .*",
                r"preflight ok: .*; to install: toolkit kernels dockerRuntime",
                re.escape("packages: 3 file(s) in /var/cache/ascend-npu/packages match their sha256 (upload)"),
                re.escape(f"firmware: already {NEW['firmware']}, skipped"),
                re.escape(f"driver: already {NEW['driver']}, skipped"),
                *installer_lines("toolkit", package["toolkit"], "--install --install-for-all --quiet"),
                *installer_lines("kernels", package["kernels"], "--install --install-for-all --quiet"),
                *installer_lines("dockerRuntime", package["dockerRuntime"], "--install --install-scene=containerd",
                                 " --config-file-path=/var/lib/ascend-npu/runtime-installer/engine-config"),
                re.escape(f"containerd: ascend runtime added in config.toml, backup {backup}"),
                "containerd: restarting", r"containerd: restarted in [1-9]\d* s"]
    lines = said(result.stdout)
    assert len(lines) == len(expected) and all(re.fullmatch(e, line) for e, line in zip(expected, lines)), lines
    logged = node.path(RUN_LOG).read_text().splitlines()
    assert [re.sub(r"^\S+Z \[install\] ", "", line) for line in logged] == lines


def test_an_installers_start_reaches_ssh_while_it_runs_and_its_end_when_it_ends(node):
    node.knob("hold-driver", "3")  # the fake driver installer stays 3 s after its files are in
    client = node.start_step(node.spec())
    watchdog = threading.Timer(120, client.kill)
    watchdog.start()
    seen: dict[str, float] = {}
    try:
        for line in client.stdout:
            if line.startswith("[install] driver: installer started "):
                seen["started"] = time.monotonic()
                assert node.installer_calls() == []  # the fake records a run only once it exits
            elif line.startswith("[install] driver "):
                seen["finished"] = time.monotonic()
                assert re.fullmatch(r"\[install\] driver \S+ installed with .* in [3-9] s; its installer asks for a "
                                    r"reboot \(exit 2\)\n", line)
        assert client.wait() == 0, client.stderr.read()
    finally:
        watchdog.cancel()
        client.stdout.close()
        client.stderr.close()
    assert seen["finished"] - seen["started"] >= 2.5


def test_mirror_fetches_are_announced_and_no_line_or_log_holds_the_login(node):
    login = "deploy:Mirror-pass-7f3a"
    with serve_directory(node.packages.directory, login=login, node_root=node.root) as (url, _):
        spec = parse_stack(stack_config(node.packages, node.host_key, source="mirror", mirror_url=url),
                           mirror_credentials=login, mirror_credentials_is_secret=True)
        node.stage_scripts()
        result = node.run(node.steps(spec)["install"].create, mirror_login_stdin(login))
    assert result.returncode == 0, result.stderr
    lines = said(result.stdout)
    for kind, file in files(spec).items():
        at = lines.index(f"{kind}: fetching {url}/{file}")
        assert re.fullmatch(rf"{kind}: fetched in \d+ s \([0-9.]+[KMG]?i?B\)", lines[at + 1]), lines[at + 1]
    logs = "".join(path.read_text(errors="replace") for path in node.path("/var/log/ascend-npu").iterdir())
    assert "Mirror-pass-7f3a" not in result.stdout + result.stderr + logs


def test_verify_on_destroy_and_uninstall_name_the_log_first(node):
    spec = node.spec(uninstall=True)
    assert node.run_step(spec, "install").returncode == 0
    for step, name in (("verify", "verify"), ("on_destroy", "on-destroy")):
        result = node.run_step(spec, step)
        assert result.returncode == 0, result.stderr
        assert said(result.stdout, name)[0] == f"log on the node: {RUN_LOG}"
    destroy = node.run(node.steps(spec)["on_destroy"].delete)
    assert destroy.returncode == 0, destroy.stderr
    lines = said(destroy.stdout, "uninstall")
    assert lines[0] == INSTALL_LOG_LINE
    driver = lines.index(f"driver: installer started ({files(spec)['driver']} --uninstall)")
    assert re.fullmatch(rf"driver {re.escape(NEW['driver'])} uninstalled in \d+ s", lines[driver + 1])
