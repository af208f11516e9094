#!/usr/bin/env bash
# uninstall (on `pulumi destroy` with rollout.uninstallOnDestroy): the engine's ascend runtime, then each kind in
# the reverse of install order (the Ascend Docker Runtime first, the driver last), each with its installer's
# --uninstall.
set -euo pipefail
STEP=uninstall

if ! declare -F say >/dev/null; then # run from a checkout: load the parts host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
  SCRIPTS_DIR=$here
  # shellcheck source=run_lock.sh
  . "$here/run_lock.sh"
  # shellcheck source=npu_smi.sh
  . "$here/npu_smi.sh"
  # shellcheck source=guards.sh
  . "$here/guards.sh"
  # shellcheck source=packages.sh
  . "$here/packages.sh"
  # shellcheck source=npu_stack.sh
  . "$here/npu_stack.sh"
  # shellcheck source=engine_docker.sh
  . "$here/engine_docker.sh"
  # shellcheck source=engine_containerd.sh
  . "$here/engine_containerd.sh"
  # shellcheck source=config_journal.sh
  . "$here/config_journal.sh"
fi

FAILED=()

# With ASCEND_<KIND>_UNINSTALL_FLAGS (the release catalog's; the runtime's name its engine's scene).
uninstall_package() {
  local kind=$1 found flags rc=0
  found=$(installed_version "$kind")
  if [[ -z $found ]]; then
    say "$kind: not installed, skipped"
    return
  fi
  forget_problems
  stage_package "$kind"
  if ((${#PROBLEMS[@]} > 0)); then
    FAILED+=("$kind: ${PROBLEMS[0]}")
    return
  fi
  read -ra flags <<<"$(kind_var "$kind" UNINSTALL_FLAGS)"
  installer_for "$kind" "${flags[@]}" || rc=$?
  if ((rc != 0)); then
    FAILED+=("$kind $found: --uninstall $(installer_failure "$kind" "$rc"), log in $(host_path "$LOG_DIR/$kind.log")")
    return
  fi
  if [[ -n $(installed_version "$kind") ]]; then
    FAILED+=("$kind $found: --uninstall exited 0 but left its version file; see $(host_path "$LOG_DIR/$kind.log")")
    return
  fi
  say "$kind $found uninstalled in $INSTALLER_SECONDS s"
}

main() {
  local kinds i line
  require_params
  say_log_path
  require_python3
  hold_run_lock
  # Removing the driver and firmware kills NPU work as surely as replacing them does.
  check_disruption driver firmware
  stop_on_problems "uninstall refused; nothing was changed"
  remove_stale_temp_files
  recover_engine_config
  save_engine_config
  if [[ $ASCEND_ENGINE == docker ]]; then apply_daemon_json remove; else apply_containerd_config remove; fi
  forget_engine_config
  read -ra kinds <<<"$ASCEND_KINDS"
  for ((i = ${#kinds[@]} - 1; i >= 0; i--)); do uninstall_package "${kinds[i]}"; done
  ((${#FAILED[@]} == 0)) && return 0
  for line in "${FAILED[@]}"; do complain "$line"; done
  die "${#FAILED[@]} package(s) not uninstalled; fix and rerun the destroy"
}

keep_lines_short
main </dev/null
