# shellcheck shell=bash
# The NPU stack in ascend-deployer's order: driver and firmware (driver first on a fresh host, firmware first when
# a driver is present), CANN toolkit, CANN kernels, then the Ascend Docker Runtime. Each package is skipped when
# its version file already shows the wanted version, so a rerun after a failure carries on where it stopped.

LOG_DIR="$ROOT/var/log/ascend-npu"

# The installer flags for this host's state (ASCEND-FACTS section 2); the result lands in FLAGS.
choose_flags() {
  local present
  present=$(installed_version "$1")
  case $1 in
    driver | firmware) if [[ -n $present ]]; then FLAGS=(--upgrade --quiet); else FLAGS=(--full --quiet); fi ;;
    toolkit | kernels) if [[ -n $present ]]; then FLAGS=(--upgrade --quiet); else FLAGS=(--install --quiet); fi ;;
    dockerRuntime)
      if [[ -n $present ]]; then FLAGS=(--upgrade); else FLAGS=(--install "--install-scene=$ASCEND_ENGINE"); fi ;;
  esac
}

# run_installer KIND FLAG...: the staged .run file with its output in LOG_DIR/KIND.log; returns its exit code.
run_installer() {
  local kind=$1 log rc=0
  shift
  log="$LOG_DIR/$kind.log"
  mkdir -p "$LOG_DIR"
  printf '== %s %s\n' "$(kind_var "$kind" FILE)" "$*" >>"$log"
  bash "$(staged_file "$kind")" "$@" >>"$log" 2>&1 || rc=$?
  return "$rc"
}

# installer_for KIND FLAG...: run_installer, with the engine config kept for the Ascend Docker Runtime.
installer_for() {
  if [[ $1 == dockerRuntime ]]; then with_engine_config_kept run_installer "$@"; else run_installer "$@"; fi
}

install_package() {
  local kind=$1 wanted before rc=0
  wanted=$(wanted_version "$kind")
  before=$(installed_version "$kind")
  if version_matches "$wanted" "$before"; then
    say "$kind $wanted already installed, skipped"
    return
  fi
  choose_flags "$kind"
  installer_for "$kind" "${FLAGS[@]}" || rc=$?
  # ascend-deployer counts firmware exit code 2 as success.
  if ((rc != 0)) && ! [[ $kind == firmware && $rc == 2 ]]; then
    tail -n 5 "$LOG_DIR/$kind.log" >&2 || true
    die "$kind $wanted: $(kind_var "$kind" FILE) ${FLAGS[*]} failed (exit $rc), log in" \
      "$(host_path "$LOG_DIR/$kind.log"); rerun once fixed, finished packages are skipped"
  fi
  version_matches "$wanted" "$(installed_version "$kind")" || die "$kind: the installer exited $rc but the" \
    "version file shows '$(installed_version "$kind")', not $wanted"
  say "$kind $wanted installed with ${FLAGS[*]}${before:+ (was $before)}"
  if [[ $kind == firmware ]]; then mark_reboot_required; fi
}

install_npu_stack() {
  if [[ -n $(installed_version driver) ]]; then
    install_package firmware
    install_package driver
  else
    install_package driver
    install_package firmware
  fi
  install_package toolkit
  install_package kernels
}
