# shellcheck shell=bash
# The NPU stack in ascend-deployer's order: driver and firmware (driver first on a fresh host, firmware first when
# a driver is present), CANN toolkit, CANN kernels, then the Ascend Docker Runtime. Each package is skipped when
# its version file already shows the wanted version, so a rerun after a failure carries on where it stopped.

LOG_DIR="$ROOT/var/log/ascend-npu"

# The installer flags for this host's state, from the release catalog (ASCEND_<KIND>_FRESH_FLAGS on a host without
# the kind, ASCEND_<KIND>_UPGRADE_FLAGS over an installed version; components/host/parameters.py). The result lands
# in FLAGS.
choose_flags() {
  if [[ -n $(installed_version "$1") ]]; then
    read -ra FLAGS <<<"$(kind_var "$1" UPGRADE_FLAGS)"
  else
    read -ra FLAGS <<<"$(kind_var "$1" FRESH_FLAGS)"
  fi
}

# run_installer KIND FLAG...: the staged .run file with its output in LOG_DIR/KIND.log; returns its exit code. An
# installer that asks a question on stdin (ASCEND_<KIND>_ANSWER, from the release catalog) gets its answer there.
# It runs under its kind's time limit (ASCEND_<KIND>_TIMEOUT, rollout.timeouts): GNU timeout stops its whole process
# group (TERM, then KILL 30 s later), and TIMED_OUT then holds the limit. It never inherits the run lock (fd 9).
# Its start is a line of its own (an installer can run for many minutes); its end is its caller's result line, with
# INSTALLER_SECONDS, how long it ran.
TIMED_OUT="" INSTALLER_SECONDS=0
run_installer() {
  local kind=$1 log answer limit start rc=0
  shift
  log="$LOG_DIR/$kind.log"
  answer=$(kind_var "$kind" ANSWER)
  limit=$(kind_var "$kind" TIMEOUT)
  TIMED_OUT=""
  mkdir -p "$LOG_DIR"
  printf '== %s %s\n' "$(kind_var "$kind" FILE)" "$*" >>"$log"
  say "$kind: installer started ($(kind_var "$kind" FILE) $*)"
  start=$SECONDS
  if [[ -n $answer && $1 != --uninstall ]]; then
    timeout --kill-after=30 "$limit" bash "$(staged_file "$kind")" "$@" >>"$log" 2>&1 9>&- <<<"$answer" || rc=$?
  else
    timeout --kill-after=30 "$limit" bash "$(staged_file "$kind")" "$@" >>"$log" 2>&1 9>&- </dev/null || rc=$?
  fi
  INSTALLER_SECONDS=$((SECONDS - start))
  if ((rc == 124 || rc == 137)) && ((INSTALLER_SECONDS >= limit)); then
    TIMED_OUT=$limit
    printf '== stopped after %s s (rollout.timeouts)\n' "$limit" >>"$log"
    say "$kind: installer stopped after $limit s (rollout.timeouts.$kind)"
  fi
  return "$rc"
}

# What a failed installer run says: its exit code, or the time limit it ran out of.
installer_failure() {
  if [[ -n $TIMED_OUT ]]; then
    printf 'did not finish within %s s (rollout.timeouts.%s) on node %s and was stopped' "$TIMED_OUT" "$1" \
      "$ASCEND_NODE"
  else
    printf 'failed (exit %s)' "$2"
  fi
}

# installer_for KIND FLAG...: run_installer; the Ascend Docker Runtime's installer edits a scratch engine config and
# the live one is kept as it was.
installer_for() {
  if [[ $1 == dockerRuntime ]]; then
    with_engine_config_kept with_scratch_engine_config run_installer "$@"
  else
    run_installer "$@"
  fi
}

# The runtime installer rewrites the engine config it is given and chmods it 600; at 6.0.0 it also fails on a
# config.toml without a runc table or in containerd 2.x's layout (components/releases/docker-runtime.yaml). It gets
# a scratch file it can edit (`--config-file-path`, which must exist, on a root-only path), so the live config is
# changed only by the merge that follows.
RUNTIME_SCRATCH_CONFIG=/var/lib/ascend-npu/runtime-installer/engine-config
with_scratch_engine_config() {
  local scratch="$ROOT$RUNTIME_SCRATCH_CONFIG" rc=0
  # The installer refuses a config that group or others may write, or that lies under such a directory.
  mkdir -p "${scratch%/*}" && chmod 0755 "${scratch%/*}" "${scratch%/*/*}"
  if [[ $ASCEND_ENGINE == docker ]]; then
    printf '{}\n' >"$scratch"
  else
    printf '%s\n' 'version = 2' '[plugins."io.containerd.runtime.v1.linux"]' '  shim = "containerd-shim"' \
      '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]' '  runtime_type = "io.containerd.runc.v2"' \
      '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]' '  SystemdCgroup = true' >"$scratch"
  fi
  chmod 0600 "$scratch"
  "$@" "--config-file-path=$RUNTIME_SCRATCH_CONFIG" || rc=$?
  rm -f "$scratch"
  return "$rc"
}

# Exit code 2 of the driver or firmware installer: installed, a reboot is needed (ascend-deployer accepts it for both).
asks_reboot() { [[ $2 == 2 && ($1 == driver || $1 == firmware) ]]; }

install_package() {
  local kind=$1 wanted before rc=0
  wanted=$(wanted_version "$kind")
  before=$(installed_version "$kind")
  if is_wanted "$kind"; then
    say "$kind: already $before, skipped"
    return
  fi
  choose_flags "$kind"
  installer_for "$kind" "${FLAGS[@]}" || rc=$?
  if ((rc != 0)) && ! asks_reboot "$kind" "$rc"; then
    tail -n 5 "$LOG_DIR/$kind.log" >&2 || true
    die "$kind $wanted: $(kind_var "$kind" FILE) ${FLAGS[*]} $(installer_failure "$kind" "$rc"), log in" \
      "$(host_path "$LOG_DIR/$kind.log"); rerun once fixed, finished packages are skipped"
  fi
  is_wanted "$kind" || die "$kind: the installer exited $rc but the version file shows" \
    "'$(installed_version "$kind")', not $(wanted_record "$kind")"
  say "$kind $wanted installed with ${FLAGS[*]} in $INSTALLER_SECONDS s${before:+ (was $before)}$(
    asks_reboot "$kind" "$rc" && echo "; its installer asks for a reboot (exit 2)")"
  # New firmware always takes effect after a reboot; a driver only when its installer says so.
  if [[ $kind == firmware ]] || asks_reboot "$kind" "$rc"; then mark_reboot_required; fi
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
