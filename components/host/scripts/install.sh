#!/usr/bin/env bash
# install: preflight, packages staged and verified, the NPU stack, the engine's ascend runtime, then a reboot if new
# firmware needs one and the stack allows it. Rerunning on a host that has it all installs and restarts nothing.
# Parameters come as ASCEND_* variables on the command line (see components/host/commands.py).
set -euo pipefail
STEP=install

if ! declare -F say >/dev/null; then # run from a checkout: load the parts host_steps() puts before this file
  here=${BASH_SOURCE[0]%/*}
  # shellcheck source=lib.sh
  . "$here/lib.sh"
  SCRIPTS_DIR=$here
  # shellcheck source=catalog.sh
  . "$here/catalog.sh"
  # shellcheck source=run_lock.sh
  . "$here/run_lock.sh"
  # shellcheck source=npu_smi.sh
  . "$here/npu_smi.sh"
  # shellcheck source=guards.sh
  . "$here/guards.sh"
  # shellcheck source=prerequisites.sh
  . "$here/prerequisites.sh"
  # shellcheck source=preflight.sh
  . "$here/preflight.sh"
  # shellcheck source=packages.sh
  . "$here/packages.sh"
  # shellcheck source=npu_stack.sh
  . "$here/npu_stack.sh"
  # shellcheck source=compat.sh
  . "$here/compat.sh"
  # shellcheck source=engine_docker.sh
  . "$here/engine_docker.sh"
  # shellcheck source=engine_containerd.sh
  . "$here/engine_containerd.sh"
  # shellcheck source=config_journal.sh
  . "$here/config_journal.sh"
fi

# A marker from an earlier boot means the reboot it asked for has happened.
forget_past_reboots() {
  if [[ -f $REBOOT_MARK ]] && ! reboot_pending; then rm -f "$REBOOT_MARK"; fi
}

# New SSH logins are refused from here until the node is back, so the verify step cannot slip in before the
# reboot; this session survives (sshd's sessions are not stopped with its listener).
close_ssh_listener() {
  local unit
  for unit in ssh.socket ssh.service sshd.service; do systemctl stop "$unit" 2>/dev/null || true; done
}

finish() {
  reboot_pending || return 0
  if [[ $ASCEND_ALLOW_REBOOT == true ]]; then
    say "reboot required: the new firmware or driver takes effect after a reboot; rebooting in 1 s from boot" \
      "$(boot_id) (SSH closed until the node is back)"
    close_ssh_listener
    # Detached and delayed, so this step reports success first; a reboot that cannot start reopens SSH. It does
    # not keep the run lock (fd 9).
    nohup sh -c 'sleep 1; systemctl reboot || systemctl start ssh.socket ssh.service sshd.service' \
      </dev/null >/dev/null 2>&1 9>&- &
  else
    say "reboot required: the new firmware or driver takes effect after a reboot (rollout.allowReboot is false;" \
      "reboot the node)"
  fi
}

main() {
  local needed=()
  say_log_path
  require_python3
  hold_run_lock
  forget_past_reboots
  remove_stale_temp_files
  recover_engine_config
  mapfile -t needed < <(needed_kinds)
  preflight "${needed[@]}"
  save_engine_config
  stage_packages "${needed[@]}"
  install_npu_stack
  check_firmware_compatibility || die "$COMPAT_PROBLEM"
  install_package dockerRuntime
  if [[ $ASCEND_ENGINE == docker ]]; then apply_daemon_json add; else apply_containerd_config add; fi
  forget_engine_config
  record_settings "$INSTALL_RECORD"
  finish
}

# The parameters first; then a mirror login comes as the one line of stdin (never on a command line or in the
# environment, never exported); nothing the step runs reads stdin after that.
start() {
  keep_lines_short
  require_params
  if [[ $ASCEND_MIRROR_LOGIN == stdin ]]; then IFS= read -r MIRROR_CREDENTIALS || true; fi
  main </dev/null
}

start
