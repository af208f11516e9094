"""Docker's daemon.json read as dockerd reads it, and the ascend runtime merged in with every other key kept.

dockerd parses the file with Go's encoding/json: NaN and Infinity are not JSON there and stop the daemon from
starting. A key written twice is refused too: dockerd keeps only the last one, and a rewrite would silently drop
the other. The user's own default runtime is recorded before `ascend` replaces it and given back when the stack
stops asking for `ascend` as the default.
"""
import copy
import json
import os
import sys

import config_files


class Invalid(Exception):
    """daemon.json as dockerd would not take it."""


def _no_constant(name):
    raise Invalid("%s is not a JSON number, dockerd refuses the file" % name)


def _unique(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise Invalid("key '%s' is written twice; dockerd keeps only the last one, remove the other" % key)
        seen[key] = value
    return seen


def parse(raw):
    """The daemon.json object, {} for an empty or missing file; Invalid with the reason otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Invalid("not UTF-8: %s" % err) from None
    if not text.strip():
        return {}
    try:
        config = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique)
    except ValueError as err:
        raise Invalid(str(err)) from None
    if not isinstance(config, dict) or not isinstance(config.get("runtimes", {}), dict):
        raise Invalid("not a JSON object with a 'runtimes' object")
    return config


def merge(old, mode, make_default, binary, recorded):
    """(new config, default runtime to give back later); MODE add or remove."""
    new = copy.deepcopy(old)
    runtimes = new.setdefault("runtimes", {})
    ascend = runtimes.get("ascend")
    if mode == "add" and not (isinstance(ascend, dict) and ascend.get("path") == binary):
        runtimes["ascend"] = {"path": binary, "runtimeArgs": []}
    if mode == "remove":
        runtimes.pop("ascend", None)
    current = new.get("default-runtime")
    record = ""
    if mode == "add" and make_default:
        record = recorded if current == "ascend" else (current or "")
        new["default-runtime"] = "ascend"
    elif current == "ascend":
        if recorded and (recorded == "runc" or recorded in runtimes):
            new["default-runtime"] = recorded
        else:
            del new["default-runtime"]
    if not runtimes and "runtimes" not in old:
        del new["runtimes"]
    return new, record


def read_record(path):
    try:
        return config_files.read(path).decode().strip()
    except OSError:
        return ""


def load(path):
    """The parsed daemon.json at PATH (through its links); Invalid names the file."""
    target = config_files.target_of(path)
    raw = config_files.read(target) if os.path.exists(target) else b""
    try:
        return parse(raw)
    except Invalid as err:
        raise Invalid("%s is not valid JSON (%s); fix it or remove it, then rerun; it was left "
                      "untouched" % (config_files.shown(path), err)) from None


def check(path, make_default, binary, record_path):
    """What an `add` would do: `change=yes|no live-restore=yes|no`."""
    old = load(path)
    new, _ = merge(old, "add", make_default, binary, read_record(record_path))
    return "change=%s live-restore=%s" % ("yes" if new != old else "no", "yes" if old.get("live-restore") else "no")


def apply(path, mode, make_default, binary, record_path):
    """Write the merge (record first when it grows, forgotten after the write when done): same or changed."""
    old = load(path)
    recorded = read_record(record_path)
    new, record = merge(old, mode, make_default, binary, recorded)
    if record and record != recorded:
        config_files.write_durably(record_path, (record + "\n").encode(), 0o600)
    status = "same"
    if new != old:
        text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
        status = "changed backup=" + config_files.shown(config_files.replace(path, text.encode()))
    if not record and os.path.exists(record_path):
        os.unlink(record_path)
    return status


def main(argv):
    """daemon_json check|add|remove DAEMON_JSON MAKE_DEFAULT BINARY RECORD_FILE."""
    mode, path, make_default, binary, record_path = argv
    try:
        if mode == "check":
            print(check(path, make_default == "true", binary, record_path))
        else:
            print(apply(path, mode, make_default == "true", binary, record_path))
    except (Invalid, config_files.Refused) as err:
        print(err, file=sys.stderr)
        return 3
    except OSError as err:
        print(config_files.why(err, err.filename or path), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
