"""The fake node's `hccn_tool` (driver/tools/hccn_tool, written by the fake driver install): what each NPU's network
port holds, in the output forms the real tool prints.

Simulated: the NPUs' network ports. Forms, as the sources the host step cites read them: `-ip -g` prints
`ipaddr:IP` and `netmask:MASK` lines (mind-cluster v26.1.0 component/ascend-faultdiag/.../npu_info_parser.py
L813-823), `-link -g` prints `link status: UP|DOWN` (component/ascend-common/devmanager/hccn/hccn_tool.go
L108-127), `-net_health -g` prints `net health status: Success` or a failure such as `Unreachable` or `Detect ip
set` (npu_info_parser.py L418-460); a failed command exits non-zero (ascend-deployer tools/DeviceIP-conf.sh L339).
Not read from a source, so the host step does not parse them: the exact text of `-gateway -g` and `-netdetect -g`
(the step only looks for the address in it) and the wording of errors.
Knobs (fake/knobs/): pci-npus (the NPU count), hccn-link-down and hccn-unreachable (NPU ids, space separated),
hccn-set-fails (an NPU id whose settings cannot be written). State: fake/hccn.json; every call in fake/log/hccn.log.
"""
from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sandbox  # noqa: E402

STATE = "fake/hccn.json"


def ids(knob: str) -> set[str]:
    return set((sandbox.knob(knob) or "").split())


def load() -> dict:
    path = sandbox.root() / STATE
    return json.loads(path.read_text()) if path.exists() else {}


def save(state: dict) -> None:
    (sandbox.root() / STATE).write_text(json.dumps(state, sort_keys=True))


def valid(address: str) -> bool:
    try:
        ipaddress.IPv4Address(address)
        return True
    except ValueError:
        return False


def get(port: dict, npu: str, what: str) -> int:
    if what == "-ip":
        if "address" not in port:
            return 1  # no address yet: nothing to print (the faultdiag parser reports "no result")
        print(f"ipaddr:{port['address']}\nnetmask:{port['netmask']}")
    elif what == "-link":
        print(f"link status: {'DOWN' if npu in ids('hccn-link-down') else 'UP'}")
    elif what == "-net_health":
        if "detect" not in port:
            status = "Detect ip set"
        elif npu in ids("hccn-unreachable") or npu in ids("hccn-link-down"):
            status = "Unreachable"
        else:
            status = "Success"
        print(f"net health status: {status}")
    elif what == "-gateway":
        print(f"default gateway:{port.get('gateway', '')}, Iface:eth{npu}")
    elif what == "-netdetect":
        print(f"netdetect address: {port.get('detect', '')}")
    else:
        print(f"hccn_tool stand-in: {what} -g is not simulated", file=sys.stderr)
        return 1
    return 0


def put(state: dict, npu: str, what: str, rest: list[str]) -> int:
    if npu in ids("hccn-set-fails"):
        print(f"set {what} failed on device {npu}", file=sys.stderr)
        return 1
    port = state.setdefault(npu, {})
    if what == "-ip" and len(rest) == 4 and rest[0] == "address" and rest[2] == "netmask" and valid(rest[1]):
        port.update(address=rest[1], netmask=rest[3])
    elif what == "-gateway" and rest[:1] == ["gateway"] and len(rest) == 2 and valid(rest[1]):
        port["gateway"] = rest[1]
    elif what == "-netdetect" and rest[:1] == ["address"] and len(rest) == 2 and valid(rest[1]):
        port["detect"] = rest[1]
    else:
        print(f"hccn_tool stand-in: bad arguments for {what} -s: {' '.join(rest)}", file=sys.stderr)
        return 1
    save(state)
    return 0


def main(args: list[str]) -> int:
    sandbox.log("hccn.log", " ".join(args))
    if len(args) < 4 or args[0] != "-i" or args[3] not in ("-g", "-s"):
        print("hccn_tool stand-in: only `-i ID -WHAT -g` and `-i ID -WHAT -s ...` are simulated", file=sys.stderr)
        return 1
    npu, what, action, rest = args[1], args[2], args[3], args[4:]
    if not npu.isdigit() or int(npu) >= int(sandbox.knob("pci-npus", "8")):
        print(f"device id {npu} is invalid", file=sys.stderr)
        return 1
    state = load()
    return get(state.get(npu, {}), npu, what) if action == "-g" else put(state, npu, what, rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
