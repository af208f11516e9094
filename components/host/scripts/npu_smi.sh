# shellcheck shell=bash
# npu_smi_chips: the text of `npu-smi info` on stdin, a JSON list of chips on stdout:
# [{"npu": 0, "chip": 0, "name": "910B2", "health": "OK", "busId": "0000:C1:00.0"}, ...]
# Column widths vary between driver versions, so rows are read by their `|` cells: an NPU row (id and name, health)
# is followed by one chip row per chip (chip id, bus id). 310P cards have two chip rows, A3 repeats the NPU row per
# chip; the process table below the chips is skipped by its header.

read -r -d '' NPU_SMI_PARSER <<'PY' || true
import json, re, sys

BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
chips, npu, in_chip_table = [], None, False
for line in sys.stdin:
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
            chips.append({"npu": npu["npu"], "chip": int(words[0]), "name": npu["name"], "health": npu["health"],
                          "busId": cells[1]})
        elif not BUS_ID.match(cells[1]):
            npu = {"npu": int(words[0]), "name": " ".join(words[1:]), "health": cells[1]}
print(json.dumps(chips))
PY

npu_smi_chips() { python3 -c "$NPU_SMI_PARSER"; }

# npu_smi_processes: how many processes the process table of `npu-smi info` (stdin) lists.
npu_smi_processes() {
  awk -F'|' '$3 ~ /Process id/ { table = 1; next } table && $3 ~ /^[[:space:]]*[0-9]+[[:space:]]*$/ { n++ }
             END { print n + 0 }'
}
