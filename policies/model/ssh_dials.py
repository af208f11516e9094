"""Which resources dial a host over SSH, and the pins each dial takes: pulumi-command's remote resources, the local
commands that run ascend-npu's host runner, and local commands that run OpenSSH's own tools."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Optional

from model.kube_objects import mapping

REMOTE_TYPES = ("command:remote:Command", "command:remote:CopyToRemote", "command:remote:CopyFile")
LOCAL_TYPE = "command:local:Command"
LINES = ("create", "update", "delete")
# The host runner, in every module a release stored (components/runner/contract.py: MODULE and LEGACY).
RUNNER_MODULES = ("components.runner", "components.host.node_step", "components.host.reboot_wait")
SSH_TOOLS = ("ssh", "scp", "sftp", "ssh-copy-id", "autossh")
PIN = re.compile(r"^(ssh-ed25519|ssh-rsa|rsa-sha2-256|rsa-sha2-512|ecdsa-sha2-nistp(256|384|521)) "
                 r"[A-Za-z0-9+/]+={0,3}$")
SEPARATORS = (";", "&&", "||", "|", "&", "(", ")", "\n")
WRAPPERS = ("exec", "sudo", "env", "nohup", "timeout", "command", "nice", "setsid", "stdbuf")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
STRICT = re.compile(r"^stricthostkeychecking[ =]+(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Dial:
    """One host a resource connects to: what it is (for the message), where, and whether its key is pinned."""

    what: str
    host: str
    pinned: bool
    fix: str


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=False)
    except ValueError:
        return line.split()


def _flag(words: list[str], name: str) -> Optional[str]:
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _runner_dials(words: list[str], field: str) -> list[Dial]:
    if _flag(words, "--address") is None:
        return [Dial(f"the host runner ({field})", "?", False,
                     "write the line as the program does: --address HOST:PORT --host-key KEY")]
    found = []
    for host_flag, key_flag, what in (("--address", "--host-key", "the host runner's node"),
                                      ("--bastion", "--bastion-host-key", "the host runner's bastion")):
        host = _flag(words, host_flag)
        if host is None:
            continue
        pin = _flag(words, key_flag) or ""
        found.append(Dial(f"{what} ({field})", host, bool(PIN.match(" ".join(pin.split()[:2]))),
                          f"give {key_flag} the host's public key (`ssh-keyscan -t ed25519 <host>`)"))
    return found


def _ssh_strict(words: list[str]) -> Optional[str]:
    """The last StrictHostKeyChecking value OpenSSH's options give (`-o K=V`, `-oK=V`, `-o 'K V'`), or None."""
    value = None
    for i, word in enumerate(words):
        option = words[i + 1] if word == "-o" and i + 1 < len(words) else word[2:] if word.startswith("-o") else ""
        match = STRICT.match(option.strip())
        if match:
            value = match.group(1).strip().lower()
    return value


def _programs(line: str) -> list[str]:
    """The program of each simple command in a shell line: the word after a separator, past `exec`, `sudo`, `env`
    and its assignments, `nohup`, `timeout` and their options."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = line.split()
    found, start = [], True
    skip_value = False
    for token in tokens:
        if token in SEPARATORS or set(token) <= set(";&|()"):
            start = True
            continue
        if not start:
            continue
        if skip_value:
            skip_value = False
        elif token in WRAPPERS or ASSIGNMENT.match(token):
            pass
        elif token.startswith("-"):
            skip_value = token in ("-u", "-g", "-s", "-k")
        elif token[:1].isdigit():  # timeout's duration
            pass
        else:
            found.append(token.rsplit("/", 1)[-1])
            start = False
    return found


def _tool_dials(line: str, words: list[str], field: str) -> list[Dial]:
    programs = _programs(line)
    tools = [p for p in programs if p in SSH_TOOLS]
    rsync_ssh = "rsync" in programs and any(
        w in ("-e", "--rsh") or w.startswith(("--rsh=", "-e")) and "ssh" in w for w in words)
    if not tools and not rsync_ssh:
        return []
    tool = tools[0] if tools else "rsync -e ssh"
    strict = _ssh_strict(words)
    return [Dial(f"`{tool}` ({field})", "its destination", strict in ("yes", "true"),
                 "pass `-o StrictHostKeyChecking=yes` with a known_hosts file that holds the host's key "
                 "(`-o UserKnownHostsFile=FILE`), never `no` or `accept-new`")]


def dials(resource_type: str, props: Any) -> list[Dial]:
    """Every host the resource connects to over SSH, whatever its type."""
    p = mapping(props)
    if resource_type in REMOTE_TYPES:
        connection = mapping(p.get("connection"))
        found = [Dial("connection", str(connection.get("host", "?")), bool(connection.get("hostKey")),
                      "set connection.hostKey (`ssh-keyscan -t ed25519 <host>`)")]
        proxy = mapping(connection.get("proxy"))
        if proxy:
            found.append(Dial("bastion (connection.proxy)", str(proxy.get("host", "?")), bool(proxy.get("hostKey")),
                              "set connection.proxy.hostKey"))
        return found
    found = []
    for field in LINES:
        line = p.get(field)
        if not isinstance(line, str):
            continue
        words = _words(line)
        if any(words[i] == "-m" and words[i + 1] in RUNNER_MODULES for i in range(len(words) - 1)):
            found += _runner_dials(words, field)
        else:
            found += _tool_dials(line, words, field)
    return found
