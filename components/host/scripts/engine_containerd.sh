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
K3S_CONTAINERD="$ROOT/var/lib/rancher/k3s/agent/etc/containerd"

# argv: mode (add|remove|import|unimport), config version (2|3), file, make ascend the default (true|false),
# SystemdCgroup (true|false), runtime path, import entry. Prints the edited file; edits are textual, so comments,
# order and formatting of everything else stay as they were.
read -r -d '' CONTAINERD_EDIT <<'PY' || true
import re, sys

mode, version, path, make_default, systemd, binary, entry = sys.argv[1:8]
cri = 'plugins."%s".containerd' % ("io.containerd.cri.v1.runtime" if version == "3" else "io.containerd.grpc.v1.cri")
begin, end = "# ascend-npu: ascend runtime (begin)", "# ascend-npu: ascend runtime (end)"
try:
    with open(path) as f:
        lines = f.read().splitlines()
except FileNotFoundError:
    lines = []
if not any(line.strip() and not line.strip().startswith("#") for line in lines) and mode in ("add", "import"):
    lines = ["version = %s" % version]


def is_header(line):
    return re.match(r"\s*\[", line) is not None


def table(line):
    match = re.match(r"\s*\[([^\[\]]+)\]\s*(#.*)?$", line)
    return re.sub(r"\s+", "", match.group(1)).replace("'", '"') if match else None


def section(name):
    start = next((i for i, line in enumerate(lines) if table(line) == name), None)
    if start is None:
        return None
    return start, next((i for i in range(start + 1, len(lines)) if is_header(lines[i])), len(lines))


def set_default_runtime(name):
    """Point default_runtime_name at NAME; with None, only move it off ascend."""
    found = section(cri)
    key = re.compile(r"""(\s*default_runtime_name\s*=\s*)("[^"]*"|'[^']*')(.*)$""")
    for i in range(found[0] + 1, found[1]) if found else ():
        match = key.match(lines[i])
        if match:
            current = match.group(2)[1:-1]
            wanted = name or ("runc" if current == "ascend" else current)
            if wanted != current:
                lines[i] = '%s"%s"%s' % (match.group(1), wanted, match.group(3))
            return
    if name and found:
        lines.insert(found[0] + 1, '  default_runtime_name = "%s"' % name)
    elif name:
        lines.extend(["", "[%s]" % cri, '  default_runtime_name = "%s"' % name])


def edit_imports(add):
    """Add ENTRY to, or drop it from, the top-level imports list; other entries stay as written."""
    global lines
    first_table = next((i for i, line in enumerate(lines) if is_header(line)), len(lines))
    head = "\n".join(lines[:first_table])
    match = re.search(r"^[ \t]*imports\s*=\s*\[(.*?)\]", head, re.S | re.M)
    items = [a or b for a, b in re.findall(r'"([^"]*)"|\'([^\']*)\'', match.group(1))] if match else []
    if add and entry not in items:
        if match:
            inner = match.group(1).rstrip()
            sep = "" if not inner.strip() else (" " if inner.endswith(",") else ", ")
            head = head[:match.start(1)] + inner + sep + '"%s"' % entry + head[match.end(1):]
        else:
            at = next((i + 1 for i, line in enumerate(lines[:first_table]) if re.match(r"\s*version\s*=", line)), 0)
            head = "\n".join(lines[:at] + ['imports = ["%s"]' % entry] + lines[at:first_table])
    elif not add and entry in items:
        kept = ", ".join('"%s"' % item for item in items if item != entry)
        head = head[:match.start()] + "imports = [%s]" % kept + head[match.end():]
    lines = (head.split("\n") if head else []) + lines[first_table:]


if mode == "add":
    if section(cri + ".runtimes.ascend") is None:
        lines += ["", begin, "[%s.runtimes.ascend]" % cri, '  runtime_type = "io.containerd.runc.v2"',
                  "[%s.runtimes.ascend.options]" % cri, '  BinaryName = "%s"' % binary,
                  "  SystemdCgroup = %s" % systemd, end]
    set_default_runtime("ascend" if make_default == "true" else None)
elif mode == "remove":
    if begin in lines and end in lines:
        start = lines.index(begin)
        start -= 1 if start and not lines[start - 1].strip() else 0  # the blank line "add" put before it
        del lines[start:lines.index(end) + 1]
    set_default_runtime(None)
else:
    edit_imports(mode == "import")
print("\n".join(lines), end="\n" if lines else "")
PY
# edit_containerd_config MODE VERSION FILE [SYSTEMD_CGROUP [IMPORT_ENTRY]]: the edited FILE on stdout.
edit_containerd_config() {
  python3 -c "$CONTAINERD_EDIT" "$1" "$2" "$3" "${ASCEND_DEFAULT_RUNTIME:-false}" "${4:-true}" "$RUNTIME_BINARY" \
    "${5:-$DROP_IN_PATH}"
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

# The cgroup driver runc uses in a dump, so ascend matches every other pod on the node (default: systemd).
runc_systemd_cgroup() {
  local value
  value=$(awk -v header="[plugins.\"$(cri_plugin "$2")\".containerd.runtimes.runc.options]" '
    { line = $0; gsub(/^[ \t]+|[ \t]+$/, "", line) }
    line ~ /^\[/ { inside = (line == header); next }
    inside && line ~ /^SystemdCgroup[ \t]*=/ { sub(/^[^=]*=[ \t]*/, "", line); print line; exit }' "$1")
  echo "${value:-true}"
}

# Whether a dump has the ascend runtime (and, when asked, as the default): an import can hide it on 1.x.
effective_has_ascend() {
  grep -qF "[plugins.\"$(cri_plugin "$2")\".containerd.runtimes.ascend]" "$1" || return 1
  [[ ${ASCEND_DEFAULT_RUNTIME:-false} != true ]] || grep -q '^[[:space:]]*default_runtime_name = "ascend"' "$1"
}

# plan_containerd MODE (add|remove): candidate files and the effective config before and after, written to
# PLAN_MAIN (config.toml), PLAN_DROP (the 2.x drop-in, empty on 1.x or to remove it), PLAN_BEFORE and PLAN_AFTER;
# PLAN_CHANGE is none when the files already are as wanted. Nothing on the host changes. Problems are collected.
plan_containerd() {
  local mode=$1 major version check next_to
  if [[ -e $CONTAINERD_CONFIG.tmpl || -d $K3S_CONTAINERD ]]; then
    problem "containerd: k3s manages this node's containerd config (it renders config.toml from config.toml.tmpl" \
      "at every start); add the ascend runtime to that template as the k3s docs describe, then rerun; nothing" \
      "was changed"
    return 1
  fi
  temp_file && PLAN_BEFORE=$REPLY
  temp_file && PLAN_AFTER=$REPLY
  if ! config_dump "$CONTAINERD_CONFIG" "$PLAN_BEFORE"; then
    problem "containerd cannot load /etc/containerd/config.toml ($DUMP_ERROR); fix it (check with" \
      "'containerd --config /etc/containerd/config.toml config dump'), then rerun; it was left untouched"
    return 1
  fi
  major=$(containerd_major)
  version=$(config_version "$CONTAINERD_CONFIG")
  if ! has_settings "$CONTAINERD_CONFIG"; then version=$((major >= 2 ? 3 : 2)); fi
  if ! [[ $version == 2 || ($version == 3 && $major -ge 2) ]]; then
    problem "containerd: /etc/containerd/config.toml is config version ${version:-1}; containerd $major.x takes" \
      "the ascend runtime in version 2$( ((major >= 2)) && echo ' or 3'): migrate the file ('containerd config" \
      "migrate', or start from 'containerd config default'), then rerun; it was left untouched"
    return 1
  fi
  # Candidates lie next to config.toml, where containerd resolves its relative imports.
  next_to=$CONTAINERD_CONFIG
  if [[ ! -d ${CONTAINERD_CONFIG%/*} ]]; then next_to=$ROOT/tmp/config.toml; fi
  temp_file "$next_to.ascend-npu.XXXXXX" && PLAN_MAIN=$REPLY
  temp_file && PLAN_DROP=$REPLY
  check=$PLAN_MAIN
  if ((major < 2)); then
    edit_containerd_config "$mode" "$version" "$CONTAINERD_CONFIG" "$(runc_systemd_cgroup "$PLAN_BEFORE" "$version")" \
      >"$PLAN_MAIN"
  elif [[ $mode == add ]]; then
    edit_containerd_config add "$version" /dev/null "$(runc_systemd_cgroup "$PLAN_BEFORE" "$version")" >"$PLAN_DROP"
    edit_containerd_config import "$version" "$CONTAINERD_CONFIG" >"$PLAN_MAIN"
    # Loaded as if in place: the candidate config imports the candidate drop-in, not the live one, from where it
    # lies now.
    temp_file "$next_to.ascend-npu.XXXXXX" && check=$REPLY
    edit_containerd_config unimport "$version" "$CONTAINERD_CONFIG" >"$check"
    edit_containerd_config import "$version" "$check" true "$(host_path "$PLAN_DROP")" >"$PLAN_AFTER"
    cat "$PLAN_AFTER" >"$check"
  else
    edit_containerd_config unimport "$version" "$CONTAINERD_CONFIG" >"$PLAN_MAIN"
  fi
  PLAN_CHANGE=some
  if same_file "$PLAN_MAIN" "$CONTAINERD_CONFIG" && { ((major < 2)) || same_file "$PLAN_DROP" "$DROP_IN"; }; then
    PLAN_CHANGE=none
    return 0
  fi
  if ! config_dump "$check" "$PLAN_AFTER" "$(host_path "$PLAN_DROP")" "$DROP_IN_PATH"; then
    problem "containerd: the config with the ascend runtime does not load ($DUMP_ERROR); config.toml was left" \
      "untouched"
    return 1
  fi
  if [[ $mode == add ]] && ! effective_has_ascend "$PLAN_AFTER" "$version"; then
    problem "containerd: the ascend runtime would not reach the effective config: a file config.toml imports" \
      "replaces the whole CRI section (containerd 1.x, issue #5837); add the ascend runtime to that file, then" \
      "rerun; config.toml was left untouched"
    return 1
  fi
}

check_containerd_config() { plan_containerd add || true; }

# apply_containerd_config MODE (add|remove): put the planned files in place, restart on a real change.
apply_containerd_config() {
  local verb=added restart=false
  if [[ $1 == remove ]]; then verb=removed; fi
  forget_problems
  plan_containerd "$1" || true
  stop_on_problems "containerd config left untouched"
  if [[ $PLAN_CHANGE == none ]]; then
    say "containerd: the ascend runtime is already $verb as wanted, containerd not restarted"
    return
  fi
  # Restart on a change of the effective config; dropping the drop-in always is one.
  if ! cmp -s "$PLAN_BEFORE" "$PLAN_AFTER" || [[ $1 == remove && -f $DROP_IN ]]; then restart=true; fi
  if [[ -s $PLAN_DROP ]]; then
    place_file "$PLAN_DROP" "$DROP_IN"
  elif [[ -f $DROP_IN ]]; then
    rm -f "$DROP_IN"
  fi
  BACKUP=""
  if ! same_file "$PLAN_MAIN" "$CONTAINERD_CONFIG"; then replace_file "$PLAN_MAIN" "$CONTAINERD_CONFIG"; fi
  if [[ $restart == false ]]; then
    say "containerd: config files rewritten, effective config unchanged, containerd not restarted"
    return
  fi
  systemctl restart containerd
  local where=config.toml
  if [[ -s $DROP_IN ]]; then where="conf.d/${DROP_IN##*/} imported by config.toml"; fi
  say "containerd: ascend runtime $verb in $where${BACKUP:+ (backup ${BACKUP##*/})}, containerd restarted"
}
