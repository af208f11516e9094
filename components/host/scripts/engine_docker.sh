# shellcheck shell=bash
# Docker: the ascend runtime merged into /etc/docker/daemon.json, every other key and value kept as it was.

DAEMON_JSON="$ROOT/etc/docker/daemon.json"

# argv: daemon.json, output file, mode (check|add|remove), make ascend the default (true|false), runtime path.
# Writes the merged file to the output and prints "changed", prints nothing when the merge changes nothing.
read -r -d '' DAEMON_JSON_MERGE <<'PY' || true
import json, sys

path, out, mode, make_default, binary = sys.argv[1:6]
try:
    with open(path, "rb") as f:
        raw = f.read()
except FileNotFoundError:
    raw = b""
try:
    old = json.loads(raw) if raw.strip() else {}
except ValueError as err:
    sys.exit(f"/etc/docker/daemon.json is not valid JSON ({err}); fix it or remove it, then rerun; it was left "
             "untouched")
if not isinstance(old, dict) or not isinstance(old.get("runtimes", {}), dict):
    sys.exit("/etc/docker/daemon.json is not a JSON object with a 'runtimes' object; fix it, then rerun; it was "
             "left untouched")
if mode == "check":
    sys.exit(0)
new = json.loads(json.dumps(old))
runtimes = new.setdefault("runtimes", {})
ascend = runtimes.get("ascend")
if mode == "add" and not (isinstance(ascend, dict) and ascend.get("path") == binary):
    runtimes["ascend"] = {"path": binary, "runtimeArgs": []}
if mode == "remove":
    runtimes.pop("ascend", None)
if mode == "add" and make_default == "true":
    new["default-runtime"] = "ascend"
elif new.get("default-runtime") == "ascend":
    del new["default-runtime"]
if not runtimes and "runtimes" not in old:
    del new["runtimes"]
if new != old:
    with open(out, "w") as f:
        json.dump(new, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print("changed")
PY

# merge_daemon_json MODE OUT: run the merge; on a file it cannot read, print why and fail.
merge_daemon_json() {
  python3 -c "$DAEMON_JSON_MERGE" "$DAEMON_JSON" "$2" "$1" "${ASCEND_DEFAULT_RUNTIME:-false}" "$RUNTIME_BINARY"
}

check_daemon_json() {
  local why
  why=$(merge_daemon_json check /dev/null 2>&1) || problem "docker: $why"
}

# apply_daemon_json MODE (add|remove): write the merge atomically with a backup, restart docker only on a change.
apply_daemon_json() {
  local out result verb=added
  if [[ $1 == remove ]]; then verb=removed; fi
  temp_file && out=$REPLY
  result=$(merge_daemon_json "$1" "$out" 2>&1) || die "docker: $result"
  if [[ $result != changed ]]; then
    say "docker: /etc/docker/daemon.json already as wanted (ascend runtime $verb), docker not restarted"
    return
  fi
  replace_file "$out" "$DAEMON_JSON"
  systemctl restart docker
  local detail="default runtime ascend: ${ASCEND_DEFAULT_RUNTIME:-false}"
  if [[ -n $BACKUP ]]; then detail+=", backup ${BACKUP##*/}"; fi
  say "docker: ascend runtime $verb in /etc/docker/daemon.json ($detail), docker restarted"
}
