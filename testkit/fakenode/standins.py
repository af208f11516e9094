"""Stand-ins for the host tools the scripts call by name: uname, lspci, systemctl, getent, dockerd, cri-dockerd,
npu-smi, df, sudo; and ifconfig and modinfo, which preflight only looks for.

The fake node's bin directory holds one tiny wrapper per tool that runs `standins.py <tool> ARGS...`.
Knobs (files under fake/knobs/): arch, kernel, pci-npus, pci-device, npu-smi-fixture, npu-smi-health ("NPU VALUE"),
npu-smi-drop (an NPU id), npu-smi-fail, free-kb, cri-dockerd-version, restart-sleep, sudo-password; and power.py's
reboot-down-seconds, reboot-stays-down, driver-load-seconds, booted-at.
"""
from __future__ import annotations

import os
import re
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import power  # noqa: E402
import sandbox  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "npu_smi"
BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")


def uname(args: list[str]) -> int:
    fields = {"-s": "Linux", "-n": "ascend-fake", "-r": sandbox.knob("kernel"), "-m": sandbox.knob("arch")}
    wanted = args or ["-s"]
    if wanted == ["-a"]:
        wanted = ["-s", "-n", "-r", "-m"]
    print(" ".join(fields[flag] for flag in wanted))
    return 0


def lspci(args: list[str]) -> int:
    if args != ["-n"]:
        print("lspci stand-in: only `lspci -n` is supported", file=sys.stderr)
        return 1
    # A Kunpeng board: host bridge, a Huawei NIC (same vendor, not an NPU), then the NPUs.
    print("00:00.0 0604: 19e5:a120 (rev 01)")
    print("7d:00.0 0200: 19e5:a222 (rev 21)")
    device = sandbox.knob("pci-device", "d802")
    for i in range(int(sandbox.knob("pci-npus", "8"))):
        print(f"{0xc1 + i:02x}:00.0 1200: 19e5:{device} (rev 20)")
    return 0


def systemctl(args: list[str]) -> int:
    sandbox.log("systemctl.log", " ".join(args))
    if (sandbox.root() / power.REQUESTS).is_dir():  # the test serves the node's power and listener (power.py)
        return power_request(args)
    if args[:1] == ["restart"]:  # a unit that takes this long to come back (knob `restart-sleep`, seconds)
        time.sleep(float(sandbox.knob("restart-sleep", "0")))
    if args[:1] == ["reboot"]:  # the node comes back with a new boot id
        (sandbox.root() / "proc/sys/kernel/random/boot_id").write_text(str(uuid.uuid4()) + "\n")
    return 0


def power_request(args: list[str]) -> int:
    """stop/start of an SSH unit or reboot, as power.py serves them; any other unit as before."""
    if args[:1] == ["reboot"]:
        power.ask(sandbox.root(), "reboot", wait=False)
        return 0
    if args[:1] in (["stop"], ["start"]) and args[1:] and args[1] in power.UNITS:
        power.ask(sandbox.root(), f"{args[0]}-ssh", wait=True)
        return 0
    if args[:1] == ["restart"]:
        time.sleep(float(sandbox.knob("restart-sleep", "0")))
    return 0


def getent(args: list[str]) -> int:
    database, key = args
    path = sandbox.root() / "etc" / database
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.split(":", 1)[0] == key:
            print(line)
            return 0
    return 2


def dockerd(args: list[str]) -> int:
    print("Docker version 24.0.7, build 311b9ff")
    return 0


def cri_dockerd(args: list[str]) -> int:
    """`cri-dockerd --version` as Mirantis' binary prints it; knob `cri-dockerd-version` (default 0.4.0)."""
    print(f"cri-dockerd {sandbox.knob('cri-dockerd-version', '0.4.0')} (b9b8893)", file=sys.stderr)
    return 0


def npu_smi_text() -> str:
    """The chosen fixture with the health and missing-NPU knobs applied."""
    text = (FIXTURES / f"{sandbox.knob('npu-smi-fixture', '910b')}.txt").read_text()
    sick_npu, _, sick_value = (sandbox.knob("npu-smi-health") or "").partition(" ")
    drop = sandbox.knob("npu-smi-drop")
    out, in_chip_table, dropping = [], False, False
    for line in text.splitlines():
        raw = line.split("|")
        cells = [cell.strip() for cell in raw[1:-1]]
        words = cells[0].split() if cells else []
        if len(cells) >= 3 and words[:1] == ["NPU"]:
            in_chip_table = cells[1].startswith("Health")
        numbered = in_chip_table and len(cells) >= 3 and words[:1] != [] and words[0].isdigit()
        chip_row = numbered and BUS_ID.match(cells[1]) is not None
        npu_row = numbered and not chip_row
        if npu_row:
            dropping = words[0] == drop
        elif not chip_row:
            dropping = False
        if dropping:
            continue
        if npu_row and words[0] == sick_npu:
            raw[2] = (" " + sick_value).ljust(len(raw[2]))
            line = "|".join(raw)
        out.append(line)
    return "\n".join(out) + "\n"


# `| npu-smi %-24s Version: %-53s |` (github.com/hicann/driver ef377e9 src/custom/dev_prod/user/npucli/src/
# npu_info_print.c L598): the driver's version as its version.info writes it, lower case (public dumps: 24.1.rc2.1 in
# the 910b fixture, 25.2.3 and 26.0.rc2 in vllm-project/vllm-ascend issues); the line keeps its width.
HEADER = re.compile(r"^\| npu-smi (\S+)(\s+)Version: (\S+)(\s+)\|$", re.M)


def with_driver_version(text: str, version: str) -> str:
    """The fixture's header line naming the installed driver's version, as the real npu-smi does."""
    def header(found: re.Match) -> str:
        width = len(found[0])
        left = f"| npu-smi {version}".ljust(len(f"| npu-smi {found[1]}{found[2]}"))
        return f"{left}Version: {version}".ljust(width - 1) + "|"
    return HEADER.sub(header, text, count=1)


def df(args: list[str]) -> int:
    """`df -Pk PATH` as coreutils prints it, with the free space the `free-kb` knob sets (default plenty)."""
    if args[:1] != ["-Pk"] or len(args) != 2:
        print("df stand-in: only `df -Pk PATH` is supported", file=sys.stderr)
        return 1
    free = int(sandbox.knob("free-kb", str(500 * 1024 * 1024)))
    print("Filesystem     1024-blocks      Used  Available Capacity Mounted on")
    print(f"/dev/vda2       {free * 2:>11} {free:>9} {free:>10}      50% /")
    return 0


def driver_loading() -> bool:
    """After a simulated reboot (power.py), the driver answers only `driver-load-seconds` after the boot."""
    booted, load = sandbox.knob("booted-at"), sandbox.knob("driver-load-seconds")
    return booted is not None and load is not None and time.time() - float(booted) < float(load)


def npu_smi(args: list[str]) -> int:
    # Imported here: it loads the release catalog (pydantic models), a third of a second every other tool needn't pay.
    import ascend_files
    if not ascend_files.installed(sandbox.root(), "driver", sandbox.knob("arch", "")):
        print("npu-smi: command not found (the driver installs it)", file=sys.stderr)
        return 127
    if args != ["info"]:
        print("npu-smi stand-in: only `npu-smi info` is supported", file=sys.stderr)
        return 1
    if sandbox.knob("npu-smi-fail") or driver_loading():
        print("dcmi module initialize failed. ret is -8005", file=sys.stderr)
        return 1
    sys.stdout.write(with_driver_version(npu_smi_text(), ascend_files.installed(sandbox.root(), "driver", "") or ""))
    return 0


# The SSH user's sudo: the login is root already, so `sudo -n COMMAND...` runs COMMAND, ASCEND_ROOT and PATH kept as
# an env_keep rule would keep them. With the `sudo-password` knob the user's rule wants a password, and `sudo -n`
# says what sudo says then (plugins/sudoers/logging.c, log_auth_failure), exit 1.
def sudo(args: list[str]) -> int:
    """`sudo -n COMMAND...` as the SSH user's sudo runs it, or refuses it for want of a password."""
    if args[:1] != ["-n"] or len(args) < 2:
        print("sudo stand-in: only `sudo -n COMMAND...` is supported", file=sys.stderr)
        return 1
    if sandbox.knob("sudo-password"):
        print("sudo: a password is required", file=sys.stderr)
        return 1
    os.execvp(args[1], args[1:])


def only_looked_for(tool: str):
    """A tool preflight looks for and nothing in these tests runs: any run says so and fails."""
    def refuse(args: list[str]) -> int:
        print(f"{tool} stand-in: present for preflight's check only, never run by the fake installers",
              file=sys.stderr)
        return 1
    return refuse


TOOLS = {"uname": uname, "lspci": lspci, "systemctl": systemctl, "getent": getent, "dockerd": dockerd,
         "cri-dockerd": cri_dockerd, "npu-smi": npu_smi, "df": df, "sudo": sudo,
         "ifconfig": only_looked_for("ifconfig"), "modinfo": only_looked_for("modinfo")}

if __name__ == "__main__":
    sys.exit(TOOLS[sys.argv[1]](sys.argv[2:]))
