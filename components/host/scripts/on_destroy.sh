#!/usr/bin/env bash
# on_destroy: records what `pulumi destroy` (or removing this node from the stack) does here: with
# rollout.uninstallOnDestroy, run uninstall.sh (its SHA-256 as of this `pulumi up`) with the parameters of the last
# install; without, nothing. The destroy command itself never changes (run_destroy.sh): the record is what does.
set -euo pipefail
STEP=on-destroy

if ! declare -F say >/dev/null; then # run from a checkout: load the part host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
fi

ON_DESTROY_RECORD="$STATE_DIR/on-destroy.env"

installed_setting() { sed -n "s/^$1=//p" "$INSTALL_RECORD"; }

main() {
  require_params
  say_log_path
  if [[ $ASCEND_ON_DESTROY == uninstall && ! -f $INSTALL_RECORD ]]; then
    die "no record of a finished install on this node ($(host_path "$INSTALL_RECORD")); run pulumi up again"
  fi
  record_settings "$ON_DESTROY_RECORD"
  if [[ $ASCEND_ON_DESTROY == uninstall ]]; then
    say "on destroy: uninstall driver $(installed_setting ASCEND_DRIVER_VERSION), firmware" \
      "$(installed_setting ASCEND_FIRMWARE_VERSION), CANN $(installed_setting ASCEND_TOOLKIT_VERSION) and the Ascend" \
      "Docker Runtime $(installed_setting ASCEND_DOCKER_RUNTIME_VERSION)"
  else
    say "on destroy: keep the software (rollout.uninstallOnDestroy is off)"
  fi
}

keep_lines_short
main </dev/null
