"""The verify step's findings: one line each on stderr, a summary line, then one JSON object as the last line.

argv: node, expected chips, reboot pending, chips JSON, driver, firmware, CANN, runtime versions, problems...
"""
import json
import sys


def main(argv):
    node, expected, reboot, chips, driver, firmware, cann, runtime = argv[:8]
    problems = list(argv[8:])
    chips = json.loads(chips)
    for chip in chips:
        if chip["health"] != "OK":
            problems.append("NPU %(npu)s chip %(chip)s (%(busId)s) is %(health)s, not OK" % chip)
    if len(chips) != int(expected):
        seen = ", ".join("%(npu)s/%(chip)s" % chip for chip in chips) or "none"
        problems.append("npu-smi shows %d chip(s) (NPU/chip: %s), the node should have %s"
                        % (len(chips), seen, expected))
    for line in problems:
        print("[verify] " + line, file=sys.stderr)
    if not problems:
        print("[verify] %d chip(s) OK; driver %s, firmware %s, CANN %s, Ascend Docker Runtime %s"
              % (len(chips), driver, firmware, cann, runtime))
    versions = {"driver": driver, "firmware": firmware, "cann": cann, "dockerRuntime": runtime}
    print(json.dumps({"node": node, "versions": {k: v or None for k, v in versions.items()}, "chips": chips,
                      "healthy": not problems, "rebootRequired": reboot == "true"}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
