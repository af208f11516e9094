#!/usr/bin/env bash
# verify: installed versions read back from their version files, every chip present and healthy in `npu-smi info`.
# Prints one line per finding and, as the last line of stdout, one JSON object; exits non-zero on any problem.
set -euo pipefail
STEP=verify

if ! declare -F say >/dev/null; then # run from a checkout: load the parts host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
  SCRIPTS_DIR=$here
  # shellcheck source=catalog.sh
  . "$here/catalog.sh"
  # shellcheck source=npu_smi.sh
  . "$here/npu_smi.sh"
  # shellcheck source=compat.sh
  . "$here/compat.sh"
fi

main() {
  local kind kinds found smi chips problem rc=0 reboot=false problems=() args=()
  require_params
  say_log_path
  require_python3
  read -ra kinds <<<"$ASCEND_KINDS"
  for kind in "${kinds[@]}"; do
    found=$(installed_version "$kind")
    args+=(--found "$kind=$found")
    shows "$kind" "$found" || problems+=("$kind is ${found:-not installed}, the stack wants $(wanted_record "$kind")")
  done
  check_firmware_compatibility || problems+=("$COMPAT_PROBLEM")
  smi=$(npu-smi info 2>&1) || rc=$?
  if ((rc != 0)); then
    problems+=("npu-smi info failed (exit $rc): ${smi%%$'\n'*}")
    smi=""
  fi
  chips=$(npu_smi_chips <<<"$smi")
  if reboot_pending; then reboot=true; fi
  for problem in "${problems[@]:+${problems[@]}}"; do args+=("--problem=$problem"); done
  local verdict=0
  py verify_report --node "$ASCEND_NODE" --expected-chips "$ASCEND_NPU_COUNT" --reboot-pending "$reboot" \
    --chips "$chips" "${args[@]}" || verdict=$?
  # The run log keeps the verdict beside the install's lines (stdout must end with the JSON object).
  if ((verdict == 0)); then log_line "verified: chips healthy, versions as the stack wants"; else
    log_line "verify failed: ${problems[*]:-see npu-smi info}"
  fi
  return "$verdict"
}

keep_lines_short
main </dev/null
