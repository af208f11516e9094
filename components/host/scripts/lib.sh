# shellcheck shell=bash
# Shared by every host step: messages, host paths under ASCEND_ROOT, version files, safe file replacement.

ROOT="${ASCEND_ROOT:-}"   # empty on a real host; a sandbox directory on the test node
ASCEND_HOME="$ROOT/usr/local/Ascend"
# Engines see the runtime at its real path, so this one is written into configs without ROOT.
# shellcheck disable=SC2034 # used by the engine parts
RUNTIME_BINARY=/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime
STATE_DIR="$ROOT/var/lib/ascend-npu"
REBOOT_MARK="$STATE_DIR/reboot-required"
# The parameters of the last successful install, which a destroy's uninstall runs with (run_destroy.sh).
# shellcheck disable=SC2034 # used by install.sh and on_destroy.sh
INSTALL_RECORD="$STATE_DIR/install.env"
RUN_LOG="$ROOT/var/log/ascend-npu/run.log"
STEP="${STEP:-host}"
PROBLEMS=()
TEMP_FILES=()
trap remove_temp_files EXIT
# INT and TERM end the step through EXIT, so its temp files go too. A dropped connection (HUP, or a closed pipe on
# the next line of output) must not stop a step half way: it carries on, and the run log keeps what it said.
trap 'exit 130' INT
trap 'exit 143' TERM
trap '' HUP PIPE

# keep_lines_short: from here on, each line the step prints reaches `pulumi up` at most FOLD_AT bytes long.
# pulumi-command v1.2.1 reads a command's output with a bufio.Scanner (64 KiB at most a line,
# provider/pkg/provider/util/util.go:32-53) and, past a longer line, stops reading, so the command never ends
# (remote/commandOutputs.go:77-98). A longer line (an installer's log tail, a progress bar) is folded between UTF-8
# characters, each further piece headed FOLD_MARK; the node's logs keep it whole. Bash's `read`, not awk: mawk (the
# awk of Debian and Ubuntu) reads a pipe in blocks and would hold each line back until the step ends.
FOLD_AT=16384
FOLD_MARK="[line continued] "
fold_long_lines() {
  local LC_ALL=C line cut
  while IFS= read -r line || [[ -n $line ]]; do
    while ((${#line} > FOLD_AT)); do
      cut=$FOLD_AT
      while ((cut > 1)) && [[ ${line:cut:1} == [$'\x80'-$'\xbf'] ]]; do cut=$((cut - 1)); done
      printf '%s\n' "${line:0:cut}"
      line=$FOLD_MARK${line:cut}
    done
    printf '%s\n' "$line"
  done
}
keep_lines_short() { exec > >(fold_long_lines) 2> >(fold_long_lines >&2); }

say() {
  printf '[%s] %s\n' "$STEP" "$*" 2>/dev/null || true
  log_line "$*"
}
complain() {
  printf '[%s] %s\n' "$STEP" "$*" >&2 2>/dev/null || true
  log_line "$*"
}
log_line() {
  { mkdir -p "${RUN_LOG%/*}" && printf '%s [%s] %s\n' "$(date -u +%FT%TZ)" "$STEP" "$*" >>"$RUN_LOG"; } 2>/dev/null ||
    true
}
die() { complain "$*"; exit 1; }
# A step's first line: where the node keeps, with times, every line the step prints (`pulumi up` shows each only as
# a status), and the installers' own logs in the steps that run them (LOG_DIR, npu_stack.sh).
say_log_path() {
  local installers=""
  if [[ -n ${LOG_DIR:-} ]]; then installers=" (each installer's output: $(host_path "$LOG_DIR")/<kind>.log)"; fi
  say "log on the node: $(host_path "$RUN_LOG")$installers"
}

# record_settings FILE: this step's ASCEND_* parameters (those of its command line, never the sandbox root nor a
# mirror login, which is never exported), one KEY=VALUE a line, root-only, kept with keep_record.
record_settings() {
  local name lines=()
  for name in $(compgen -e | grep '^ASCEND_' | sort); do
    [[ $name == ASCEND_ROOT ]] && continue
    [[ ${!name} != *$'\n'* ]] || die "$name holds a line break; nothing recorded"
    lines+=("$name=${!name}")
  done
  mkdir -p "${1%/*}"
  temp_file "${1%/*}/.${1##*/}.new.XXXXXX"
  printf '%s\n' "${lines[@]}" >"$REPLY"
  chmod 0600 "$REPLY"
  keep_record "$1" "$REPLY"
}

# keep_record FILE NEW: FILE gets NEW's content only when it differs, durably (NEW synced, renamed over FILE, the
# directory synced), so a run with nothing new to record leaves FILE, its time and its inode as they were. A sync
# without file operands (coreutils before 8.24) syncs everything.
keep_record() {
  if cmp -s "$2" "$1"; then return 0; fi
  sync -- "$2" 2>/dev/null || sync
  mv -f "$2" "$1"
  sync -- "${1%/*}" 2>/dev/null || sync
}

# restart_engine UNIT: `systemctl restart UNIT` within rollout.timeouts.engineRestart; a restart that hangs or fails
# stops the step (the merged config stays in place, and the next run starts from the saved original).
# shellcheck disable=SC2153 # a parameter of the command (components/host/parameters.py), not a misspelling
restart_engine() {
  local limit=$ASCEND_ENGINE_RESTART_TIMEOUT rc=0 start=$SECONDS
  say "$1: restarting"
  timeout --kill-after=10 "$limit" systemctl restart "$1" 9>&- </dev/null || rc=$?
  if ((rc == 0)); then
    say "$1: restarted in $((SECONDS - start)) s"
    return 0
  fi
  if ((rc == 124 || rc == 137)); then
    die "$1 did not restart within $limit s (rollout.timeouts.engineRestart) on node $ASCEND_NODE; see" \
      "journalctl -u $1, then rerun"
  fi
  die "systemctl restart $1 failed (exit $rc) on node $ASCEND_NODE; see journalctl -u $1, then rerun"
}
problem() { PROBLEMS+=("$*"); }
forget_problems() { PROBLEMS=(); }
host_path() { local shown=${1#"$ROOT"}; printf '%s' "${shown:-/}"; }

# Print every collected problem and stop with a summary line; return when there is none.
stop_on_problems() {
  ((${#PROBLEMS[@]} == 0)) && return 0
  local line
  for line in "${PROBLEMS[@]}"; do complain "$line"; done
  die "$1"
}

# A new empty file (named after TEMPLATE, default a scratch file under ROOT's /tmp); its path lands in REPLY and it
# is removed when the step exits.
temp_file() {
  REPLY=$(mktemp "${1:-$ROOT/tmp/ascend-npu.XXXXXX}")
  TEMP_FILES+=("$REPLY")
}

# at_exit COMMAND...: run COMMAND when the step ends, whichever way (before its temp files go).
EXIT_HOOKS=()
at_exit() { EXIT_HOOKS+=("$*"); }
# Run after the exit hooks and the temp files are gone (the run lock's release, run_lock.sh).
LAST_HOOK=""

remove_temp_files() {
  local path hook
  for hook in "${EXIT_HOOKS[@]:-}"; do
    if [[ -n $hook ]]; then $hook || true; fi
  done
  for path in "${TEMP_FILES[@]:-}"; do
    if [[ -n $path ]]; then rm -rf -- "$path"; fi
  done
  if [[ -n ${LAST_HOOK:-} ]]; then $LAST_HOOK || true; fi
}

# The parameters this step's command must set, each declared in components/host/parameters.py (host_steps()
# renders the list between this file and the next part).
STEP_PARAMS=()

# Stop with one line naming the first parameter the command did not set: a renamed or missing one never reads as
# an empty value. An optional parameter is always set, maybe empty.
require_params() {
  local name
  ((${#STEP_PARAMS[@]} > 0)) || return 0
  if declare -F param_defaults >/dev/null; then param_defaults; fi
  if declare -F catalog_facts >/dev/null; then catalog_facts; fi
  for name in "${STEP_PARAMS[@]}"; do
    [[ -v $name ]] || die "parameter $name is not set in this step's command (components/host/parameters.py" \
      "declares it); nothing was changed"
  done
}

# kind_var KIND FIELD: the parameter ASCEND_<KIND>_<FIELD>, KIND in upper snake case (dockerRuntime is
# DOCKER_RUNTIME), as parameters.py names each kind's parameters.
kind_var() {
  local name=$1 upper
  for upper in {A..Z}; do name=${name//$upper/_$upper}; done
  name="ASCEND_${name^^}_$2"
  [[ -v $name ]] || die "parameter $name is not set in this step's command; nothing more was changed"
  printf '%s' "${!name}"
}

wanted_version() { kind_var "$1" VERSION; }

# What the kind's version file shows once the wanted version is in: the version itself, except for the Ascend Docker
# Runtime, whose installer records its own form of it (`version=v6.0.0`; the release catalog says which).
wanted_record() {
  if [[ $1 == dockerRuntime ]]; then printf '%s' "$ASCEND_DOCKER_RUNTIME_RECORD"; else wanted_version "$1"; fi
}

# shows KIND FOUND: whether FOUND, read from the kind's version file, is the wanted version; the runtime's record must
# be exactly what its release writes.
shows() {
  if [[ $1 == dockerRuntime ]]; then
    [[ -n $2 && $2 == "$(wanted_record "$1")" ]]
  else
    version_matches "$(wanted_record "$1")" "$2"
  fi
}

# Whether the kind's version file already shows the wanted version.
is_wanted() { shows "$1" "$(installed_version "$1")"; }

# Value of KEY in a KEY=VALUE file (key compared case-insensitively), or nothing.
file_value() {
  [[ -r $1 ]] || return 0
  awk -F= -v key="$2" 'tolower($1) == tolower(key) { sub(/^[^=]*=/, ""); sub(/\r$/, ""); print; exit }' "$1"
}

# Where each kind records its version (components/releases/ cites each record); CANN moved to cann/ in 8.5, where
# the operator package (kernels before 8.5, ops from it) records itself in ascend_ops_install.info.
version_files() {
  case $1 in
    driver | firmware) echo "$ASCEND_HOME/$1/version.info" ;;
    toolkit) printf '%s\n' "$ASCEND_HOME/ascend-toolkit/latest/$ASCEND_ARCH-linux/ascend_toolkit_install.info" \
      "$ASCEND_HOME/cann/$ASCEND_ARCH-linux/ascend_toolkit_install.info" ;;
    kernels) printf '%s\n' "$ASCEND_HOME/ascend-toolkit/latest/opp_kernel/version.info" \
      "$ASCEND_HOME/cann/$ASCEND_ARCH-linux/ascend_ops_install.info" ;;
    dockerRuntime) echo "$ASCEND_HOME/Ascend-Docker-Runtime/ascend_docker_runtime_install.info" ;;
  esac
}

# The installed version of a kind as its file records it: the wanted one when any of its files shows it, else the
# first one found.
installed_version() {
  local kind=$1 wanted file value found=""
  wanted=$(wanted_record "$kind")
  while read -r file; do
    value=""
    # Kernels record an internal build as Version and the CANN release as version_dir.
    if [[ $kind == kernels ]]; then value=$(file_value "$file" version_dir); fi
    if [[ -z $value ]]; then value=$(file_value "$file" version); fi
    if version_matches "$wanted" "$value"; then
      echo "$value"
      return
    fi
    if [[ -z $found ]]; then found=$value; fi
  done < <(version_files "$kind")
  echo "$found"
}

# Same version ignoring case; the installed one may add a numeric patch (driver 25.0.rc1 -> 25.0.rc1.1).
version_matches() {
  local wanted=${1,,} installed=${2,,}
  [[ -n $installed ]] || return 1
  [[ $installed == "$wanted" ]] && return 0
  [[ $installed == "$wanted".* && ${installed#"$wanted".} =~ ^[0-9]+$ ]]
}

boot_id() { cat "$ROOT/proc/sys/kernel/random/boot_id" 2>/dev/null || echo unknown; }
mark_reboot_required() { mkdir -p "${REBOOT_MARK%/*}" && boot_id >"$REBOOT_MARK"; }
# A reboot is pending when new firmware, or a driver whose installer asked for one, went in during the current boot.
reboot_pending() { [[ -f $REBOOT_MARK && $(cat "$REBOOT_MARK") == "$(boot_id)" ]]; }

# The oldest python3 the Python parts run on: their syntax and standard library are 3.6's, and daemon.json keeps its
# key order through a rewrite only where dicts keep insertion order (CPython 3.6 on).
PYTHON_MIN=3.6
PYTHON_FIX="apt-get install python3 (Debian, Ubuntu) or dnf install python3 (openEuler, CentOS; yum on CentOS 7)"

# Before anything that runs a Python part: python3 there and new enough, or stop with the package to install.
require_python3() {
  local found fix="install python3 $PYTHON_MIN or newer with $PYTHON_FIX, then rerun; nothing was changed"
  command -v python3 >/dev/null || die "python3 not found, and this step runs its Python parts with it: $fix"
  found=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>&1) ||
    die "python3 does not run (python3 -c said: ${found//$'\n'/ }): $fix"
  [[ $(printf '%s\n' "$PYTHON_MIN" "$found" | sort -V | head -n 1) == "$PYTHON_MIN" ]] ||
    die "python3 is $found, older than the $PYTHON_MIN this step's Python parts need: $fix"
}

# py MODULE ARG...: one of the Python parts (components/host/scripts/*.py) with python3; they travel in
# PYTHON_BUNDLE beside the shell parts, or are read from the checkout next to this file.
py() {
  if [[ -n ${PYTHON_BUNDLE:-} ]]; then
    python3 -c "$PYTHON_BUNDLE" "$@"
  else
    python3 "${SCRIPTS_DIR:?}/$1.py" "${@:2}"
  fi
}

# Give DEST (or the file it links to) the content of NEW: one rename after every byte is written and synced, owner
# and mode kept (a new file gets 0644), DEST's previous content kept as DEST.bak.<first 12 of its sha256>, checked
# before it is trusted. The backup's name lands in BACKUP (empty when DEST did not exist); a failed write stops the
# step with its reason (a full disk by name) and DEST as it was.
replace_file() {
  local result
  result=$(py config_files replace "$2" <"$1" 2>&1) || die "$result"
  # shellcheck disable=SC2034 # read by the engine parts
  BACKUP=${result#backup=}
}
