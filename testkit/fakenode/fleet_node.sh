#!/usr/bin/env bash
# A fleet node's ForceCommand (fleet.py). The node is the address the client dialled (SSH_CONNECTION's third field),
# its disk the sandbox $FLEET_NODES/<address>. The staging commands of node_files.py run as sent, in that sandbox; a
# host step's command (run_step.sh's call: `ascend-npu STEP SHA256 ...` ends it) is answered at once with what the
# real step prints when it succeeds, once its scripts are staged with the hashes it names: the installers, the NPUs
# and the NPU network are simulated.
set -euo pipefail
server=${SSH_CONNECTION#* * }
server=${server%% *}
export ASCEND_ROOT=$FLEET_NODES/$server
command=${SSH_ORIGINAL_COMMAND:-}
# shellcheck disable=SC2016 # the staging commands' own first words, not an expansion
if [[ $command == 'r="${ASCEND_ROOT:-}"; '* ]]; then exec bash -c "$command"; fi

steps=${command##*ascend-npu }
pairs='^([a-z_]+) [0-9a-f]{64}( [a-z_]+ [0-9a-f]{64})*$'
if [[ $command != *'ascend-npu '* || ! $steps =~ $pairs ]]; then
  echo "fleet node $server: serves the staging and the host steps' commands only" >&2
  exit 2
fi
step=${BASH_REMATCH[1]}
staged=$ASCEND_ROOT/var/tmp/ascend-npu-scripts
read -ra words <<<"$steps"
for ((i = 0; i < ${#words[@]}; i += 2)); do
  sum=$(sha256sum "$staged/${words[i]}.sh" 2>/dev/null) || sum=""
  if [[ ${sum%% *} != "${words[i + 1]}" ]]; then
    printf '[%s] its script (sha256 %s) is not staged in /var/tmp/ascend-npu-scripts\n' "${words[i]}" \
      "${words[i + 1]}" >&2
    exit 3
  fi
done
echo "$step" >>"$ASCEND_ROOT/fake/log/steps.log"

# param NAME: the value NAME=VALUE among the command's env assignments gives (a word, or one quoted '...').
param() {
  local pattern="(^| )$1=('[^']*'|[^ ]*)" value
  [[ $command =~ $pattern ]] || return 0
  value=${BASH_REMATCH[2]}
  value=${value#\'}
  printf '%s' "${value%\'}"
}
json() { if [[ -n $1 ]]; then printf '"%s"' "$1"; else printf null; fi; }
say() { printf '[%s] %s\n' "${step//_/-}" "$*"; }
state=$ASCEND_ROOT/var/lib/ascend-npu
node=$(param ASCEND_NODE)
driver=$(param ASCEND_DRIVER_VERSION) firmware=$(param ASCEND_FIRMWARE_VERSION)
cann=$(param ASCEND_TOOLKIT_VERSION) runtime=$(param ASCEND_DOCKER_RUNTIME_RECORD)
if [[ -z $runtime && $step == verify ]]; then # the runtime's record, as the staged script looks it up (catalog.sh)
  declare -A CATALOG=()
  # shellcheck source=/dev/null
  source <(sed -n '/^declare -A CATALOG=($/,/^)$/p' "$staged/verify.sh")
  version=$(param ASCEND_DOCKER_RUNTIME_VERSION)
  runtime=${CATALOG[ASCEND_DOCKER_RUNTIME_RECORD|${version,,}]}
fi

case $step in
install)
  mkdir -p "$state"
  printf 'ASCEND_%s\n' "DRIVER_VERSION=$driver" "FIRMWARE_VERSION=$firmware" "TOOLKIT_VERSION=$cann" \
    "DOCKER_RUNTIME_VERSION=$(param ASCEND_DOCKER_RUNTIME_VERSION)" >"$state/install.env"
  say "fleet node $server: firmware $firmware, driver $driver, CANN $cann and the Ascend Docker Runtime" \
    "$(param ASCEND_DOCKER_RUNTIME_VERSION) in place (installers simulated); no reboot needed"
  ;;
verify)
  chip=$(cat "$ASCEND_ROOT/fake/knobs/chip")
  name=910B2 per_card=1
  if [[ $chip == 310P ]]; then name=310P3 per_card=2; fi
  count=$(param ASCEND_NPU_COUNT) chips=""
  for ((i = 0; i < count; i++)); do
    chips+="${chips:+,}$(printf '{"npu":%d,"chip":%d,"name":"%s","health":"OK","busId":"0000:%02X:00.0"}' \
      $((i / per_card)) $((i % per_card)) "$name" $((i / per_card + 1)))"
  done
  say "log on the node: /var/log/ascend-npu/run.log"
  say "$count chip(s) OK; driver $driver, firmware $firmware, CANN $cann, Ascend Docker Runtime $runtime"
  printf '{"node":"%s","versions":{"driver":%s,"firmware":%s,"cann":%s,"dockerRuntime":%s},' "$node" \
    "$(json "$driver")" "$(json "$firmware")" "$(json "$cann")" "$(json "$runtime")"
  printf '"chips":[%s],"healthy":true,"rebootRequired":false}\n' "$chips"
  ;;
npu_network)
  ports=""
  say "log on the node: /var/log/ascend-npu/run.log"
  for entry in $(param ASCEND_NPU_NETWORK); do
    IFS=, read -r npu address mask gateway detect <<<"$entry"
    say "NPU $npu: address $address netmask $mask"
    say "NPU $npu: gateway $gateway"
    say "NPU $npu: detection address $detect"
    ports+="${ports:+, }{\"npu\": $npu, \"address\": \"$address\", \"link\": \"UP\", \"netHealth\": \"Success\", "
    ports+="\"shows\": \"$address\", \"ready\": true}"
    count=$((${count:-0} + 1))
  done
  say "${count:-0} NPU(s): link up, address as written, detection address answering"
  printf '{"node": "%s", "npus": [%s], "ready": true}\n' "$node" "$ports"
  ;;
on_destroy)
  say "log on the node: /var/log/ascend-npu/run.log"
  if [[ $(param ASCEND_ON_DESTROY) == uninstall ]]; then
    declare -A was=()
    while IFS='=' read -r key value; do was[$key]=$value; done <"$state/install.env"
    say "on destroy: uninstall driver ${was[ASCEND_DRIVER_VERSION]}, firmware ${was[ASCEND_FIRMWARE_VERSION]}, CANN" \
      "${was[ASCEND_TOOLKIT_VERSION]} and the Ascend Docker Runtime ${was[ASCEND_DOCKER_RUNTIME_VERSION]}"
  else
    say "on destroy: keep the software (rollout.uninstallOnDestroy is off)"
  fi
  ;;
*)
  say "fleet node $server: no answer for step $step" >&2
  exit 2
  ;;
esac
