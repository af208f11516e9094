#!/usr/bin/env bash
# npu_network: each NPU's device IP, netmask, gateway and detection address written with the driver's hccn_tool
# where they differ, then checked: link up, the address as written, the detection address answering. Prints one line
# per NPU and, as the last line of stdout, one JSON object; exits non-zero when an NPU is not ready.
# hccn_tool forms: `-i ID -ip -s address IP netmask MASK` and `-i ID -netdetect -s address IP` (ascend-deployer
# 5.0.RC1.B101 offline-deploy/tools/hccn/main/hccn.go L144, L149), `-i ID -gateway -s gateway IP` (tools/
# DeviceIP-conf.sh L346); `-ip -g` prints `ipaddr:IP` and `netmask:MASK` lines (mind-cluster v26.1.0
# component/ascend-faultdiag/.../npu_info_parser.py L813-823), `-link -g` prints `link status: UP|DOWN`
# (component/ascend-common/devmanager/hccn/hccn_tool.go L108-127), `-net_health -g` prints `net health status:
# Success` or the failure (npu_info_parser.py L418-460). The tool lives at driver/tools/hccn_tool (hccn_tool.go L87).
set -euo pipefail
STEP='npu-network'

if ! declare -F say >/dev/null; then # run from a checkout: load the part host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
fi

HCCN_TOOL="$ASCEND_HOME/driver/tools/hccn_tool"
NETWORK_RECORD="$STATE_DIR/npu-network.env"

hccn() { "$HCCN_TOOL" -i "$@"; }
# field OUTPUT KEY: the value after `KEY:` on OUTPUT's line for KEY, spaces trimmed.
field() { sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" <<<"$1" | head -n 1 | tr -d '[:space:]'; }
has_address() { grep -qw -- "${2//./\\.}" <<<"$1"; }

apply_port() {
  local npu=$1 address=$2 mask=$3 gateway=$4 detect=$5 now was
  now=$(hccn "$npu" -ip -g 2>&1) || now=""
  was=$(field "$now" ipaddr)
  if [[ $was != "$address" || $(field "$now" netmask) != "$mask" ]]; then
    hccn "$npu" -ip -s address "$address" netmask "$mask" >/dev/null ||
      die "NPU $npu: hccn_tool could not set address $address netmask $mask"
    say "NPU $npu: address $address netmask $mask${was:+ (was $was/$(field "$now" netmask))}"
  fi
  now=$(hccn "$npu" -gateway -g 2>&1) || now=""
  if ! has_address "$now" "$gateway"; then
    hccn "$npu" -gateway -s gateway "$gateway" >/dev/null || die "NPU $npu: hccn_tool could not set gateway $gateway"
    say "NPU $npu: gateway $gateway"
  fi
  now=$(hccn "$npu" -netdetect -g 2>&1) || now=""
  if ! has_address "$now" "$detect"; then
    hccn "$npu" -netdetect -s address "$detect" >/dev/null ||
      die "NPU $npu: hccn_tool could not set detection address $detect"
    say "NPU $npu: detection address $detect"
  fi
}

# check_port NPU ADDRESS: `link health address` as they stand now.
check_port() {
  local out link health address
  out=$(hccn "$1" -link -g 2>&1) || out=""
  link=$(sed -n 's/^link status: *//p' <<<"$out" | tr -d '[:space:]')
  out=$(hccn "$1" -net_health -g 2>&1) || out=""
  health=$(sed -n 's/^net health status: *//p' <<<"$out" | sed 's/[[:space:]]*$//')
  address=$(field "$(hccn "$1" -ip -g 2>&1 || true)" ipaddr)
  printf '%s|%s|%s\n' "${link:-unknown}" "${health:-unknown}" "${address:-none}"
}

main() {
  local entry npu address mask gateway detect state deadline results=() ready
  require_params
  say_log_path
  require_python3
  [[ -x $HCCN_TOOL ]] ||
    die "no hccn_tool at $(host_path "$HCCN_TOOL"): the NPU driver installs it; install the driver, then run pulumi up"
  for entry in $ASCEND_NPU_NETWORK; do
    IFS=, read -r npu address mask gateway detect <<<"$entry"
    apply_port "$npu" "$address" "$mask" "$gateway" "$detect"
  done
  # Links and the detection probe take a while after an address changes: checked every 2 s until the limit.
  deadline=$((SECONDS + ASCEND_NPU_NETWORK_TIMEOUT))
  while :; do
    results=() ready=true
    for entry in $ASCEND_NPU_NETWORK; do
      IFS=, read -r npu address _ <<<"$entry"
      state=$(check_port "$npu")
      results+=("$npu|$address|$state")
      [[ $state == "UP|Success|$address" ]] || ready=false
    done
    if $ready || ((SECONDS >= deadline)); then break; fi
    sleep 2
  done
  record_settings "$NETWORK_RECORD"
  py npu_network_report --node "$ASCEND_NODE" "${results[@]}"
}

keep_lines_short
main </dev/null
