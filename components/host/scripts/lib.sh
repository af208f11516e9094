# shellcheck shell=bash
# Shared by every host step: messages, host paths under ASCEND_ROOT, version files, safe file replacement.

ROOT="${ASCEND_ROOT:-}"   # empty on a real host; a sandbox directory on the test node
ASCEND_HOME="$ROOT/usr/local/Ascend"
# Engines see the runtime at its real path, so this one is written into configs without ROOT.
# shellcheck disable=SC2034 # used by the engine parts
RUNTIME_BINARY=/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime
REBOOT_MARK="$ROOT/var/lib/ascend-npu/reboot-required"
STEP="${STEP:-host}"
PROBLEMS=()
TEMP_FILES=()
trap remove_temp_files EXIT

say() { printf '[%s] %s\n' "$STEP" "$*"; }
complain() { printf '[%s] %s\n' "$STEP" "$*" >&2; }
die() { complain "$*"; exit 1; }
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

remove_temp_files() {
  local path
  for path in "${TEMP_FILES[@]:-}"; do
    if [[ -n $path ]]; then rm -rf -- "$path"; fi
  done
}

# Value of ASCEND_<KIND>_<FIELD> from the command line, e.g. `kind_var driver FILE`.
kind_var() {
  local name
  case $1 in
    dockerRuntime) name=DOCKER_RUNTIME ;;
    toolkit | kernels) if [[ $2 == VERSION ]]; then name=CANN; else name=${1^^}; fi ;;
    *) name=${1^^} ;;
  esac
  name="ASCEND_${name}_$2"
  printf '%s' "${!name:-}"
}

wanted_version() { kind_var "$1" VERSION; }

# What the kind's version file shows once the wanted version is in: the version itself, except for the Ascend Docker
# Runtime, whose installer records its own form of it (`version=v6.0.0`; the release catalog says which).
wanted_record() {
  if [[ $1 == dockerRuntime ]]; then kind_var "$1" RECORD; else wanted_version "$1"; fi
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

# Where each kind records its version (ASCEND-FACTS section 3); CANN moved to cann/ in 8.5.
version_files() {
  case $1 in
    driver | firmware) echo "$ASCEND_HOME/$1/version.info" ;;
    toolkit) printf '%s\n' "$ASCEND_HOME/ascend-toolkit/latest/$ASCEND_ARCH-linux/ascend_toolkit_install.info" \
      "$ASCEND_HOME/cann/$ASCEND_ARCH-linux/ascend_toolkit_install.info" ;;
    kernels) printf '%s\n' "$ASCEND_HOME/ascend-toolkit/latest/opp_kernel/version.info" \
      "$ASCEND_HOME/cann/opp_kernel/version.info" ;;
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

# Give DEST the content of NEW with one rename inside DEST's directory, so readers see the old or the new file,
# never half of one. DEST keeps its owner and mode (a new file gets 0644).
place_file() {
  local new=$1 dest=$2 next
  mkdir -p "${dest%/*}"
  temp_file "$dest.ascend-npu.XXXXXX" && next=$REPLY
  cat "$new" >"$next"
  if [[ -f $dest ]]; then
    chown --reference="$dest" "$next" && chmod --reference="$dest" "$next"
  else
    chmod 644 "$next"
  fi
  mv -f "$next" "$dest"
}

# place_file, keeping DEST's previous content as DEST.bak.<first 12 of its sha256>; the backup's name lands in
# BACKUP (empty when DEST did not exist).
replace_file() {
  BACKUP=""
  if [[ -f $2 ]]; then
    BACKUP="$2.bak.$(sha256sum <"$2" | cut -c1-12)"
    [[ -e $BACKUP ]] || cp -p "$2" "$BACKUP"
  fi
  place_file "$1" "$2"
}
