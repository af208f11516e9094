# shellcheck shell=bash
# The engine config's original (content, owner, mode), saved durably (originals.py) before any installer may touch
# the file: a run after an interrupted one starts by putting it back, the runtime installer's own edit is undone
# from it, and it is dropped once the stack's merge is in place, or at exit when the file still is it.

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

# with_engine_config_kept COMMAND...: the runtime installer (COMMAND) is handed a scratch config of its own
# (with_scratch_engine_config, npu_stack.sh), yet a release that edited the live file anyway (`mv` over it, then
# `chmod 600`: run_main.sh of v6.0.0 without --config-file-path) must not cost the user a byte: the original is
# saved before it runs and put back after (content, owner, mode), so the merge that follows makes only the stack's
# change.
with_engine_config_kept() {
  local config status rc=0
  config=$(engine_config_file)
  save_engine_config
  "$@" || rc=$?
  status=$(py originals restore "$config" "$STATE_DIR" 2>&1) || die "$status"
  case $status in
    restored) say "note: undid the runtime installer's edits to $(host_path "$config") (content, owner and mode as" \
      "saved)" ;;
    removed) say "note: removed the $(host_path "$config") the runtime installer wrote" ;;
  esac
  return "$rc"
}
