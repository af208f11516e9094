"""`npu-smi info` on stdin, its chips as a JSON list on stdout.

[{"npu": 0, "chip": 0, "name": "910B2", "health": "OK", "busId": "0000:C1:00.0"}, ...]. Column widths vary between
driver versions, so rows are read by their `|` cells: an NPU row (id and name, health) is followed by one chip row
per chip (chip id, bus id). 310P cards have two chip rows, A3 repeats the NPU row per chip; the process table below
the chips is skipped by its header.
"""
import json
import re
import sys

BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")


def chips(text):
    """The chips of an `npu-smi info` output."""
    found, npu, in_chip_table = [], None, False
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        words = cells[0].split()
        if len(cells) < 3 or not words:
            continue
        if words[0] == "NPU":  # a table header: the chip table has Health, the process table Process id
            in_chip_table = cells[1].startswith("Health")
        elif in_chip_table and words[0].isdigit():
            if BUS_ID.match(cells[1]) and npu is not None:
                found.append({"npu": npu["npu"], "chip": int(words[0]), "name": npu["name"],
                              "health": npu["health"], "busId": cells[1]})
            elif not BUS_ID.match(cells[1]):
                npu = {"npu": int(words[0]), "name": " ".join(words[1:]), "health": cells[1]}
    return found


def main(argv):
    print(json.dumps(chips(sys.stdin.read())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
