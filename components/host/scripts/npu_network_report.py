"""The NPU network step's findings: one line per NPU not ready on stderr, a summary, then one JSON object last.

Arguments (npu_network.sh): --node NAME, then one `NPU|ADDRESS|LINK|HEALTH|SEEN` per NPU: the address the stack
gives, `hccn_tool -link -g`'s status, `-net_health -g`'s status and the address `-ip -g` shows.
"""
import argparse
import json
import sys


def port(text):
    npu, address, link, health, seen = text.split("|", 4)
    return {"npu": int(npu), "address": address, "link": link, "netHealth": health, "shows": seen}


def problems_of(item):
    found = []
    if item["shows"] != item["address"]:
        found.append("shows address %(shows)s, not %(address)s" % item)
    if item["link"] != "UP":
        found.append("link %(link)s" % item)
    if item["netHealth"] != "Success":
        found.append("detection address not answering (net health status: %(netHealth)s)" % item)
    return found


def main(argv):
    parser = argparse.ArgumentParser(prog="npu_network_report")
    parser.add_argument("--node", required=True)
    parser.add_argument("ports", nargs="*")
    args = parser.parse_args(argv)
    ports = [port(text) for text in args.ports]
    bad = 0
    for item in ports:
        found = problems_of(item)
        item["ready"] = not found
        if found:
            bad += 1
            print("[npu-network] NPU %d: %s" % (item["npu"], "; ".join(found)), file=sys.stderr)
    if not bad:
        print("[npu-network] %d NPU(s): link up, address as written, detection address answering" % len(ports))
    print(json.dumps({"node": args.node, "npus": ports, "ready": not bad}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
