"""`pulumi up --target` read from the CLI above the program: a node's steps are never run out of their order."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from components.host import targets as t
from engine.cache import REPO

CHAIN = "ascend-npu:index:AscendNpuPlatform$ascend-npu:index:AscendHost"
NODE = f"urn:pulumi:prod::ascend-npu::{CHAIN}::ascend-npu-npu-07"
INSTALL = f"urn:pulumi:prod::ascend-npu::{CHAIN}$command:local:Command::ascend-npu-npu-07-install"
# Earlier releases' install step, still in a stack's state until its next `up`.
OLD_INSTALL = f"urn:pulumi:prod::ascend-npu::{CHAIN}$command:remote:Command::ascend-npu-npu-07-install"
DESTROY = f"urn:pulumi:prod::ascend-npu::{CHAIN}$command:local:Command::ascend-npu-npu-07-destroy"
DRAIN = f"urn:pulumi:prod::ascend-npu::{CHAIN}$command:local:Command::ascend-npu-npu-07-drain"
LABEL = ("urn:pulumi:prod::ascend-npu::ascend-npu:index:AscendNpuPlatform$ascend-npu:index:AscendCluster$"
         "command:local:Command::ascend-npu-cluster-node-npu-07")
# Earlier releases' label, still in a stack's state until its next `up`.
OLD_LABEL = ("urn:pulumi:prod::ascend-npu::ascend-npu:index:AscendNpuPlatform$ascend-npu:index:AscendCluster$"
             "kubernetes:core/v1:NodePatch::ascend-npu-cluster-node-npu-07")
DAEMONSET = ("urn:pulumi:prod::ascend-npu::ascend-npu:index:AscendNpuPlatform$ascend-npu:index:AscendCluster$"
             "kubernetes:apps/v1:DaemonSet::ascend-npu-cluster-daemonset-ascend-device-plugin-910b")


def test_the_flags_are_read_as_the_cli_reads_them():
    parsed = t.parse(["up", "--stack", "prod", "--target", INSTALL, f"--target={LABEL}", "-t", NODE, f"-t{DRAIN}",
                      "--target-replace", DAEMONSET, "--target-dependents", "--yes"])
    assert parsed == t.Targeting("up", (INSTALL, LABEL, NODE, DRAIN, DAEMONSET), (), True)
    assert t.parse(["preview", "--exclude", NODE, "--target-dependents=false"]) == t.Targeting("preview", (), (NODE,))
    assert t.parse(["-C", "infra", "up", "-t", INSTALL]).command == "up"


@pytest.mark.parametrize("args", [
    ["up"], ["up", "--target", DAEMONSET], ["up", "--target", NODE, "--target-dependents"],
    ["up", "--target", "urn:pulumi:prod::ascend-npu::**npu-07", "--target-dependents"],
    ["destroy", "--target", INSTALL], ["stack", "export"],
])
def test_whole_nodes_and_cluster_objects_may_be_targeted(args):
    assert t.refusal(args) == (None, False)


@pytest.mark.parametrize("args, said", [
    (["up", "--target", INSTALL], f"run --target '{NODE}' --target-dependents"),
    (["up", "--target", DRAIN, "--target-dependents"], "skips its drain, verify or uncordon and the canary order"),
    (["up", "--target", LABEL], "the node's label says it is ready"),
    (["up", "--target", OLD_LABEL, "--target-dependents"], "the node's label says it is ready"),
    (["up", "--exclude", LABEL], "leaves a gap in a node's steps"),
    (["up", "--target", NODE], "targets none of ascend-npu-npu-07's steps (they are its children)"),
    (["up", "--target", "**-install", "--target-dependents"], "a pattern can match one of a node's host steps"),
    (["up", "--target", "**npu-07**"], "add --target-dependents"),
    (["up", "--exclude", DRAIN], "leaves a gap in a node's steps"),
    (["up", "--target", OLD_INSTALL], f"run --target '{NODE}' --target-dependents"),
    (["up", "--target", DESTROY], f"run --target '{NODE}' --target-dependents"),
    (["up", "--target", "**-destroy", "--target-dependents"], "a pattern can match one of a node's host steps"),
])
def test_a_step_alone_a_label_or_a_gap_stops_up_naming_what_to_run(args, said):
    message, stop = t.refusal(args)
    assert stop and message.startswith("pulumi up refused, nothing was changed:") and said in message, message
    assert "docs/day-2.md, Targeted runs" in message


def test_a_preview_only_warns():
    message, stop = t.refusal(["preview", "--target", INSTALL])
    assert not stop and message.startswith("pulumi up would refuse these:")


def test_the_command_line_is_found_above_the_language_host(tmp_path):
    """A real process tree: a process named `pulumi` starts a host, which starts the program; the program reads
    the CLI's words from the kernel's process table."""
    program = f"import sys; sys.path.insert(0, {str(REPO)!r}); from components.host.targets import cli_argv; " \
              "print(cli_argv())"
    host = tmp_path / "language-host"
    host.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"$1\"\n")
    host.chmod(0o755)
    # The interpreter started as `pulumi up --target ...`: it runs the file `up`, which starts the host and waits.
    (tmp_path / "up").write_text(f"import subprocess\nsubprocess.run([{str(host)!r}, {program!r}], check=True)\n")
    done = subprocess.run(["pulumi", "up", "--target", INSTALL], executable=sys.executable, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(["up", "--target", INSTALL])
    # Not under a `pulumi` (the offline plan, the end-to-end program host): nothing to read.
    assert t.cli_argv() is None


def test_a_process_table_that_cannot_be_read_means_no_check(tmp_path):
    assert t.cli_argv(proc=tmp_path / "nothing") is None
    fake = tmp_path / "proc" / "42"
    fake.mkdir(parents=True)
    (fake / "cmdline").write_bytes(b"/usr/local/bin/pulumi\0up\0-t\0" + INSTALL.encode() + b"\0")
    (fake / "status").write_text("Name:\tpulumi\nPPid:\t1\n")
    assert t.cli_argv(proc=Path(tmp_path / "proc"), pid=42) == ["up", "-t", INSTALL]
