# shellcheck shell=bash
# containerd: the ascend runtime added without losing any existing setting.
# containerd 1.x replaces a WHOLE plugin section with the one from an imported file (containerd issue #5837), so a
# drop-in would reset sandbox_image, the registry and the other runtimes: on 1.x the runtime tables are appended to
# config.toml itself. containerd 2.x merges imports key by key: there the runtime goes into a conf.d drop-in that
# config.toml imports. Either way the host's own `containerd config dump` loads the result before it replaces
# anything, and containerd restarts only when its effective config changed.

CONTAINERD_CONFIG="$ROOT/etc/containerd/config.toml"
DROP_IN_PATH=/etc/containerd/conf.d/99-ascend-runtime.toml # as containerd sees it
DROP_IN="$ROOT$DROP_IN_PATH"
CONTAINERD_DEFAULT_RECORD="$STATE_DIR/default-runtime.containerd"

# edit_containerd_config MODE VERSION FILE OUT [SYSTEMD_CGROUP | IMPORT_ENTRY]: the edited FILE written to OUT
# (containerd_config.py; the user's recorded default runtime comes back when ascend stops being the default). A
# failure is collected as a problem, naming the file and why (a full disk by name).
edit_containerd_config() {
  local recorded="" why
  if [[ -f $CONTAINERD_DEFAULT_RECORD ]]; then recorded=$(<"$CONTAINERD_DEFAULT_RECORD"); fi
  case $1 in
    import | unimport) why=$(py containerd_config "$1" "$2" "$3" "$4" "${5:-$DROP_IN_PATH}" 2>&1) ;;
    *) why=$(py containerd_config "$1" "$2" "$3" "$4" "$ASCEND_DEFAULT_RUNTIME" "${5:-}" "$RUNTIME_BINARY" \
      "$recorded" 2>&1) ;;
  esac && return 0
  problem "containerd: $why; config.toml was left untouched"
  return 1
}

containerd_major() { containerd --version | awk '{ v = $3; sub(/^v/, "", v); split(v, part, "."); print part[1] }'; }
cri_plugin() { if [[ $1 == 3 ]]; then echo io.containerd.cri.v1.runtime; else echo io.containerd.grpc.v1.cri; fi; }
has_settings() { [[ -f $1 ]] && grep -q '^[[:space:]]*[^#[:space:]]' "$1"; }
same_file() { if [[ -f $2 ]]; then cmp -s "$1" "$2"; else [[ ! -s $1 ]]; fi; }

# The top-level `version = N` of a config file; nothing when the file has none.
config_version() {
  [[ -f $1 ]] || return 0
  awk '/^[[:space:]]*\[/ { exit }
       /^[[:space:]]*version[[:space:]]*=/ { sub(/^[^=]*=[[:space:]]*/, ""); sub(/[^0-9].*$/, ""); print; exit }' "$1"
}

# config_dump FILE OUT [PATH AS]...: the effective config containerd builds from FILE (from nothing when FILE does
# not exist), with FILE's path, and each PATH, written AS the live one so a candidate's dump compares equal to the
# live dump when nothing changed. The list of loaded files is left out: containerd prints it in no fixed order.
# On failure containerd's reason is in DUMP_ERROR.
config_dump() {
  local source=$1 out=$2 err text
  shift 2
  if [[ ! -f $source ]]; then temp_file && source=$REPLY; fi
  temp_file && err=$REPLY
  # From /, as the daemon runs: containerd 1.x resolves relative import globs against the working directory.
  if ! (cd / && containerd --config "$source" config dump) >"$out" 2>"$err"; then
    DUMP_ERROR=$(grep -v 'level=warning' "$err" | tail -n 1)
    DUMP_ERROR=${DUMP_ERROR//"$source"/$(host_path "$CONTAINERD_CONFIG")}
    return 1
  fi
  text=$(<"$out")
  text=${text//"$source"/"$CONTAINERD_CONFIG"}
  while (($# >= 2)); do
    text=${text//"$1"/"$2"}
    shift 2
  done
  printf '%s\n' "$text" | grep -v '^imports = ' >"$out"
}

# The cgroup driver runc uses in a dump, so ascend matches every other pod on the node; nothing when runc sets none
# (ascend then gets containerd's own default too, cgroupfs on 1.x).
runc_systemd_cgroup() {
  awk -v header="[plugins.\"$(cri_plugin "$2")\".containerd.runtimes.runc.options]" '
    { line = $0; gsub(/^[ \t]+|[ \t]+$/, "", line) }
    line ~ /^\[/ { inside = (line == header); next }
    inside && line ~ /^SystemdCgroup[ \t]*=/ { sub(/^[^=]*=[ \t]*/, "", line); print line; exit }' "$1"
}

# Whether a dump has the ascend runtime (and, when asked, as the default): an import can hide it on 1.x.
effective_has_ascend() {
  grep -qF "[plugins.\"$(cri_plugin "$2")\".containerd.runtimes.ascend]" "$1" || return 1
  [[ $ASCEND_DEFAULT_RUNTIME != true ]] || grep -q '^[[:space:]]*default_runtime_name = "ascend"' "$1"
}

# One planned change of the containerd config (plan_containerd), by role: before and after (the effective config as
# containerd dumps it), main (the candidate config.toml), drop (the 2.x drop-in, empty on 1.x or to remove it),
# check (what containerd loads to test the candidates), major and version (containerd's and config.toml's), and
# change (none when the files already are as wanted).
declare -A PLAN=()

# The containerd major version and config.toml's config version into PLAN; a layout the ascend runtime cannot go
# into is a problem.
plan_layout() {
  local major version
  major=$(containerd_major)
  version=$(config_version "$CONTAINERD_CONFIG")
  if ! has_settings "$CONTAINERD_CONFIG"; then version=$((major >= 2 ? 3 : 2)); fi
  PLAN[major]=$major PLAN[version]=$version
  [[ $version == 2 || ($version == 3 && $major -ge 2) ]] && return 0
  problem "containerd: /etc/containerd/config.toml is config version ${version:-1}; containerd $major.x takes" \
    "the ascend runtime in version 2$( ((major >= 2)) && echo ' or 3'): migrate the file ('containerd config" \
    "migrate', or start from 'containerd config default'), then rerun; it was left untouched"
  return 1
}

# plan_candidates MODE: the candidate files into PLAN (main, drop, check), next to config.toml, where containerd
# resolves its relative imports.
plan_candidates() {
  local mode=$1 version=${PLAN[version]} next_to=$CONTAINERD_CONFIG cgroup
  if [[ ! -d ${CONTAINERD_CONFIG%/*} ]]; then next_to=$ROOT/tmp/config.toml; fi
  temp_file "$next_to.ascend-npu.XXXXXX" && PLAN[main]=$REPLY
  temp_file && PLAN[drop]=$REPLY
  PLAN[check]=${PLAN[main]}
  cgroup=$(runc_systemd_cgroup "${PLAN[before]}" "$version")
  if ((PLAN[major] < 2)); then
    edit_containerd_config "$mode" "$version" "$CONTAINERD_CONFIG" "${PLAN[main]}" "$cgroup"
  elif [[ $mode == add ]]; then
    edit_containerd_config add "$version" /dev/null "${PLAN[drop]}" "$cgroup" || return 1
    edit_containerd_config import "$version" "$CONTAINERD_CONFIG" "${PLAN[main]}" || return 1
    # Loaded as if in place: the candidate config imports the candidate drop-in, not the live one, from where it
    # lies now.
    temp_file "$next_to.ascend-npu.XXXXXX" && PLAN[check]=$REPLY
    edit_containerd_config unimport "$version" "$CONTAINERD_CONFIG" "${PLAN[check]}" || return 1
    edit_containerd_config import "$version" "${PLAN[check]}" "${PLAN[check]}" "$(host_path "${PLAN[drop]}")"
  else
    edit_containerd_config unimport "$version" "$CONTAINERD_CONFIG" "${PLAN[main]}"
  fi
}

# plan_effective MODE: the effective config the candidates give into PLAN[after]; one that does not load, or (to add)
# lacks the ascend runtime, is a problem.
plan_effective() {
  if ! config_dump "${PLAN[check]}" "${PLAN[after]}" "$(host_path "${PLAN[drop]}")" "$DROP_IN_PATH"; then
    problem "containerd: the config with the ascend runtime does not load ($DUMP_ERROR); config.toml was left" \
      "untouched"
    return 1
  fi
  [[ $1 != add ]] || effective_has_ascend "${PLAN[after]}" "${PLAN[version]}" && return 0
  problem "containerd: the ascend runtime would not reach the effective config: a file config.toml imports" \
    "replaces the whole CRI section (containerd 1.x, issue #5837); add the ascend runtime to that file, then" \
    "rerun; config.toml was left untouched"
  return 1
}

# plan_containerd MODE (add|remove): PLAN for MODE; nothing on the host changes. Problems are collected.
plan_containerd() {
  PLAN=([change]=some)
  temp_file && PLAN[before]=$REPLY
  temp_file && PLAN[after]=$REPLY
  if ! config_dump "$CONTAINERD_CONFIG" "${PLAN[before]}"; then
    problem "containerd cannot load /etc/containerd/config.toml ($DUMP_ERROR); fix it (check with" \
      "'containerd --config /etc/containerd/config.toml config dump'), then rerun; it was left untouched"
    return 1
  fi
  plan_layout && plan_candidates "$1" || return 1
  if same_file "${PLAN[main]}" "$CONTAINERD_CONFIG" && { ((PLAN[major] < 2)) || same_file "${PLAN[drop]}" "$DROP_IN"; }
  then
    PLAN[change]=none
    return 0
  fi
  plan_effective "$1"
}

check_containerd_config() {
  plan_containerd add || return 0
  local why
  why=$(py config_files writable "$CONTAINERD_CONFIG" 2>&1) || problem "containerd: $why"
}

# Before ascend becomes the default on 1.x, the user's own default runtime is recorded (durably), so switching
# cluster.ascendDefaultRuntime off gives it back.
record_containerd_default() {
  local current why
  [[ $1 == add && $ASCEND_DEFAULT_RUNTIME == true && ${PLAN[major]} -lt 2 ]] || return 0
  current=$(py containerd_config default-runtime "${PLAN[version]}" "$CONTAINERD_CONFIG")
  [[ -n $current && $current != ascend ]] || return 0
  why=$(printf '%s\n' "$current" | py config_files write "$CONTAINERD_DEFAULT_RECORD" 2>&1) || die "containerd: $why"
}

forget_containerd_default() {
  if [[ $ASCEND_DEFAULT_RUNTIME != true || $1 == remove ]]; then rm -f "$CONTAINERD_DEFAULT_RECORD"; fi
}

# apply_containerd_config MODE (add|remove): put the planned files in place, restart on a real change.
apply_containerd_config() {
  local verb=added restart=false why
  if [[ $1 == remove ]]; then verb=removed; fi
  forget_problems
  if engine_owned_by_k3s_or_rke2; then return; fi
  plan_containerd "$1" || true
  stop_on_problems "containerd config left untouched"
  if [[ ${PLAN[change]} == none ]]; then
    say "containerd: the ascend runtime is already $verb as wanted, containerd not restarted"
    return
  fi
  # Restart on a change of the effective config; dropping the drop-in always is one.
  if ! cmp -s "${PLAN[before]}" "${PLAN[after]}" || [[ $1 == remove && -f $DROP_IN ]]; then restart=true; fi
  record_containerd_default "$1"
  if [[ -s ${PLAN[drop]} ]]; then
    why=$(py config_files write "$DROP_IN" <"${PLAN[drop]}" 2>&1) || die "containerd: $why"
  elif [[ -f $DROP_IN ]]; then
    rm -f "$DROP_IN"
  fi
  BACKUP=""
  if ! same_file "${PLAN[main]}" "$CONTAINERD_CONFIG"; then replace_file "${PLAN[main]}" "$CONTAINERD_CONFIG"; fi
  forget_containerd_default "$1"
  if [[ $restart == false ]]; then
    say "containerd: config files rewritten${BACKUP:+ (backup $BACKUP)}, effective config unchanged, containerd not" \
      "restarted"
    return
  fi
  local where=config.toml
  if [[ -s $DROP_IN ]]; then where="conf.d/${DROP_IN##*/} imported by config.toml"; fi
  say "containerd: ascend runtime $verb in $where${BACKUP:+, backup $BACKUP}"
  restart_engine containerd
}
