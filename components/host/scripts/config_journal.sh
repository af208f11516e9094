# shellcheck shell=bash
# The engine config's original (content, owner, mode), saved durably (originals.py) before any installer may touch
# the file: a run after an interrupted one starts by putting it back, the runtime installer's own edit is undone
# from it, and it is dropped once the stack's merge is in place, or at exit when the file still is it.

SCRATCH_DIR="$STATE_DIR/scratch"

engine_config_file() {
  if [[ $ASCEND_ENGINE == docker ]]; then echo "$DAEMON_JSON"; else echo "$CONTAINERD_CONFIG"; fi
}

# Temp files of a run killed outright (no EXIT trap ran) lie next to the config; this run holds the lock, so any
# found now are not in use.
remove_stale_temp_files() {
  local config dir stale=()
  config=$(engine_config_file)
  dir=${config%/*}
  [[ -d $dir ]] || return 0
  mapfile -t stale < <(find "$dir" "$STATE_DIR" -maxdepth 2 -name '*.ascend-npu.*' -type f 2>/dev/null)
  ((${#stale[@]} > 0)) || return 0
  rm -f -- "${stale[@]}"
  say "note: removed ${#stale[@]} temp file(s) an interrupted run left next to $(host_path "$config")"
}

# A saved original means the last run stopped before its merge was in place: the file goes back to it first (what
# the file held since is kept as a backup).
recover_engine_config() {
  local config status
  config=$(engine_config_file)
  status=$(py originals recover "$config" "$STATE_DIR" 2>&1) || die "$status; no installer ran"
  case $status in
    restored) say "note: $(host_path "$config") put back as it was before an interrupted run (its content since" \
      "is kept as a .bak file)" ;;
    removed) say "note: removed the $(host_path "$config") an interrupted run's installer wrote" ;;
  esac
}

forget_engine_config_if_unchanged() {
  py originals forget-if-unchanged "$(engine_config_file)" "$STATE_DIR" >/dev/null 2>&1 || true
}

# Save the original durably; from here until the merge is in place a saved copy exists on disk.
save_engine_config() {
  local config status
  config=$(engine_config_file)
  status=$(py originals save "$config" "$STATE_DIR" 2>&1) || die "cannot save the original of" \
    "$(host_path "$config") before the installers run: $status; no installer ran"
  at_exit forget_engine_config_if_unchanged
}

forget_engine_config() { py originals forget "$(engine_config_file)" "$STATE_DIR" >/dev/null; }

# The Ascend Docker Runtime takes --config-file-path from 6.0.RC3 (mind-cluster v6.0.0-RC3 and v6.0.0,
# component/ascend-docker-runtime/build/scripts/run_main.sh); older releases only edit the live file.
runtime_takes_config_path() { py versions newer "${ASCEND_DOCKER_RUNTIME_VERSION:-0}" 6.0.rc2; }

# with_engine_config_kept COMMAND...: the runtime installer (COMMAND) rewrites the engine config itself (ascend as
# the default, `mv` over the file, `chmod 600`: run_main.sh of v6.0.0), and refuses a file that is a symbolic link.
# Where it can, it gets a private copy through --config-file-path instead; either way the live file ends as it was
# saved (content, owner, mode), so the merge that follows makes only the stack's change.
with_engine_config_kept() {
  local config scratch status rc=0 args=("$@")
  config=$(engine_config_file)
  save_engine_config
  # Only with the node's own scene: without one the installer edits Docker's file (its default scene).
  if [[ -f $config && " $* " == *" --install-scene=$ASCEND_ENGINE "* ]] && runtime_takes_config_path; then
    scratch="$SCRATCH_DIR/${config##*/}"
    status=$(py config_files copy "$config" "$scratch" 2>&1) || die "$status"
    TEMP_FILES+=("$scratch")
    args+=("--config-file-path=$scratch")
  fi
  "${args[@]}" || rc=$?
  status=$(py originals restore "$config" "$STATE_DIR" 2>&1) || die "$status"
  case $status in
    restored) say "note: undid the runtime installer's edits to $(host_path "$config") (content, owner and mode as" \
      "saved)" ;;
    removed) say "note: removed the $(host_path "$config") the runtime installer wrote" ;;
  esac
  return "$rc"
}
