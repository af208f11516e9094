"""The verify step's findings: one line each on stderr, a summary line, then one JSON object as the last line.

Named arguments (verify.sh): --node, --expected-chips, --reboot-pending true|false, --chips (a JSON list), then
--found KIND=VERSION for each installer kind and --problem TEXT for each problem found so far.
"""
import argparse
import json
import sys

# The report's versions, by the kind whose version file shows each (the kernels carry CANN's version too).
REPORTED = (("driver", "driver"), ("firmware", "firmware"), ("cann", "toolkit"), ("dockerRuntime", "dockerRuntime"))


def arguments(argv):
    parser = argparse.ArgumentParser(prog="verify_report")
    for name in ("--node", "--expected-chips", "--reboot-pending", "--chips"):
        parser.add_argument(name, required=True)
    parser.add_argument("--found", action="append", default=[])
    parser.add_argument("--problem", action="append", default=[])
    return parser.parse_args(argv)


def main(argv):
    args = arguments(argv)
    found = dict(pair.partition("=")[::2] for pair in args.found)
    versions = {key: found.get(kind, "") for key, kind in REPORTED}
    problems, chips, expected = list(args.problem), json.loads(args.chips), int(args.expected_chips)
    for chip in chips:
        if chip["health"] != "OK":
            problems.append("NPU %(npu)s chip %(chip)s (%(busId)s) is %(health)s, not OK" % chip)
    if len(chips) != expected:
        seen = ", ".join("%(npu)s/%(chip)s" % chip for chip in chips) or "none"
        problems.append("npu-smi shows %d chip(s) (NPU/chip: %s), the node should have %s"
                        % (len(chips), seen, expected))
    for line in problems:
        print("[verify] " + line, file=sys.stderr)
    if not problems:
        print("[verify] %d chip(s) OK; driver %s, firmware %s, CANN %s, Ascend Docker Runtime %s"
              % (len(chips), versions["driver"], versions["firmware"], versions["cann"], versions["dockerRuntime"]))
    # Compact: the state keeps this line in verify's stdout, once per node.
    print(json.dumps({"node": args.node, "versions": {k: v or None for k, v in versions.items()}, "chips": chips,
                      "healthy": not problems, "rebootRequired": args.reboot_pending == "true"}, separators=(",", ":")))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
