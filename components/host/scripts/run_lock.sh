# shellcheck shell=bash
# One run at a time per node: install and uninstall hold an flock for their whole run. The installers they start
# inherit it, so a run whose shell died still holds the node until its last installer ends. Who holds it, since
# when and from which SSH session is written beside the lock, so a second run can say why it stops, and can tell a
# run orphaned by a dropped connection (its session gone) from one that is merely busy.

RUN_LOCK="$STATE_DIR/run.lock"

# The parent pid of a live process, from the kernel's process table (never the sandbox's).
parent_of() { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# The sshd session process this shell runs under (through sudo and env), or nothing when run outside SSH.
ssh_session() {
  local pid=$$ name
  while [[ -n $pid && $pid -gt 1 ]]; do
    name=$(cat "/proc/$pid/comm" 2>/dev/null || true)
    if [[ $name == sshd* ]]; then
      echo "$pid"
      return
    fi
    pid=$(parent_of "$pid")
  done
}

# Why the lock is taken, as one line naming the holder.
lock_holder() {
  local record="$RUN_LOCK.holder" pid session step since
  pid=$(file_value "$record" pid)
  session=$(file_value "$record" session)
  step=$(file_value "$record" step)
  since=$(file_value "$record" since)
  if [[ -z $pid ]]; then
    echo "another run holds $(host_path "$RUN_LOCK"); wait for it to finish, then rerun"
  elif ! kill -0 "$pid" 2>/dev/null; then
    echo "an earlier ascend-npu $step (pid $pid, since $since) is gone but a program it started (an installer)" \
      "still holds $(host_path "$RUN_LOCK"); wait for it to end (see /var/log/ascend-npu/), then rerun"
  elif [[ -n $session ]] && ! kill -0 "$session" 2>/dev/null || [[ $(parent_of "$pid") == 1 ]]; then
    echo "an earlier ascend-npu $step (pid $pid, since $since) is still running although its SSH session" \
      "(pid $session) is gone: a dropped connection left it orphaned; it finishes on its own (its log:" \
      "/var/log/ascend-npu/run.log), so wait for it, then rerun (or stop it first with kill $pid)"
  else
    echo "another ascend-npu $step is running on this node (pid $pid, since" \
      "$since${session:+, SSH session pid $session}); wait for it to finish, then rerun"
  fi
}

# Take the node's lock for this run or stop, naming the run that has it.
# shellcheck disable=SC2153 # STEP is set by lib.sh
hold_run_lock() {
  command -v flock >/dev/null || die "flock not found, so runs cannot be kept apart; install util-linux, then rerun"
  mkdir -p "${RUN_LOCK%/*}"
  exec 9>>"$RUN_LOCK"
  flock -n 9 || die "$(lock_holder); nothing was changed"
  { printf 'pid=%s\nsession=%s\nstep=%s\nsince=%s\n' "$$" "$(ssh_session)" "$STEP" "$(date -u +%FT%TZ)" \
    >"$RUN_LOCK.holder"; } 2>/dev/null || true
  # shellcheck disable=SC2034 # run by remove_temp_files (lib.sh)
  LAST_HOOK=release_run_lock
}

# Last thing a run does: the holder record goes with the lock, unless a program the run started (an installer still
# running) holds the lock on; so a run with nothing to do leaves no new file under the state directory.
release_run_lock() {
  exec 9>&-
  { exec 8>>"$RUN_LOCK" && flock -n 8 && rm -f "$RUN_LOCK.holder"; } 2>/dev/null || true
  exec 8>&-
}
