#!/usr/bin/env bash
# verify: installed versions read back from their version files, every chip present and healthy in `npu-smi info`.
# Prints one line per finding and, as the last line of stdout, one JSON object; exits non-zero on any problem.
set -euo pipefail
STEP=verify

if ! declare -F say >/dev/null; then # run from a checkout: load the parts host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
  # shellcheck source=npu_smi.sh
  . "$here/npu_smi.sh"
  # shellcheck source=compat.sh
  . "$here/compat.sh"
fi

# argv: node, expected chips, reboot pending, chips JSON, driver, firmware, CANN, runtime versions, problems...
read -r -d '' VERIFY_REPORT <<'PY' || true
import json, sys

node, expected, reboot, chips, driver, firmware, cann, runtime, *problems = sys.argv[1:]
chips = json.loads(chips)
for chip in chips:
    if chip["health"] != "OK":
        problems.append("NPU %(npu)s chip %(chip)s (%(busId)s) is %(health)s, not OK" % chip)
if len(chips) != int(expected):
    seen = ", ".join("%(npu)s/%(chip)s" % chip for chip in chips) or "none"
    problems.append("npu-smi shows %d chip(s) (NPU/chip: %s), the node should have %s" % (len(chips), seen, expected))
for line in problems:
    print("[verify] " + line, file=sys.stderr)
if not problems:
    print("[verify] %d chip(s) OK; driver %s, firmware %s, CANN %s, Ascend Docker Runtime %s"
          % (len(chips), driver, firmware, cann, runtime))
versions = {"driver": driver, "firmware": firmware, "cann": cann, "dockerRuntime": runtime}
print(json.dumps({"node": node, "versions": {k: v or None for k, v in versions.items()}, "chips": chips,
                  "healthy": not problems, "rebootRequired": reboot == "true"}))
sys.exit(1 if problems else 0)
PY

main() {
  local kind found smi chips rc=0 reboot=false problems=() versions=()
  for kind in driver firmware toolkit kernels dockerRuntime; do
    found=$(installed_version "$kind")
    if [[ $kind != kernels ]]; then versions+=("$found"); fi
    shows "$kind" "$found" ||
      problems+=("$kind is ${found:-not installed}, the stack wants $(wanted_record "$kind")")
  done
  check_firmware_compatibility || problems+=("$COMPAT_PROBLEM")
  smi=$(npu-smi info 2>&1) || rc=$?
  if ((rc != 0)); then
    problems+=("npu-smi info failed (exit $rc): ${smi%%$'\n'*}")
    smi=""
  fi
  chips=$(npu_smi_chips <<<"$smi")
  if reboot_pending; then reboot=true; fi
  python3 -c "$VERIFY_REPORT" "${ASCEND_NODE:?}" "$ASCEND_NPU_COUNT" "$reboot" "$chips" "${versions[@]}" \
    "${problems[@]}"
}

main </dev/null
