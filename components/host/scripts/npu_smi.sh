# shellcheck shell=bash
# npu_smi_chips: the text of `npu-smi info` on stdin, a JSON list of chips on stdout (npu_smi.py).

npu_smi_chips() { py npu_smi; }

# npu_smi_processes: how many processes the process table of `npu-smi info` (stdin) lists.
npu_smi_processes() {
  awk -F'|' '$3 ~ /Process id/ { table = 1; next } table && $3 ~ /^[[:space:]]*[0-9]+[[:space:]]*$/ { n++ }
             END { print n + 0 }'
}
