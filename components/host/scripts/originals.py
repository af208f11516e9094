"""The user's original engine config (content, owner, mode), saved durably before any installer may touch it.

Saved under STATE_DIR/originals/: the bytes first, then a record with their checksum, so a save cut short reads
as no save at all and a damaged copy is never trusted. A run after an interrupted one puts the original back before
anything else; the runtime installer's edits are undone from it; it is dropped once the stack's merge is in place.
"""
import json
import os
import stat
import sys

import config_files


def journal(path, state):
    """Where the original of PATH is kept: its bytes and a record (checksum, owner, mode) written after them."""
    key = config_files.shown(path).strip("/").replace("/", "_")
    return os.path.join(state, "originals", key), os.path.join(state, "originals", key + ".json")


def load_original(path, state):
    """The saved original of PATH as (record, bytes), or None when there is none or it fails its checksum."""
    data_path, record_path = journal(path, state)
    try:
        record = json.loads(config_files.read(record_path).decode())
        data = config_files.read(data_path) if record["exists"] else b""
    except (OSError, ValueError, KeyError):
        return None
    if record["exists"] and (len(data) != record["size"] or config_files.sha256(data) != record["sha256"]):
        return None
    return record, data


def save_original(path, state):
    """Save PATH's content, owner and mode before anything may touch it; an intact earlier save is kept."""
    if load_original(path, state) is not None:
        return "kept"
    forget_original(path, state)
    data_path, record_path = journal(path, state)
    target = config_files.target_of(path)
    record = {"path": config_files.shown(path), "exists": os.path.exists(target)}
    if record["exists"]:
        data, status = config_files.read(target), os.stat(target)
        record.update(size=len(data), sha256=config_files.sha256(data), mode=stat.S_IMODE(status.st_mode),
                      uid=status.st_uid, gid=status.st_gid)
        config_files.write_durably(data_path, data, 0o600)
    # The record is written last: without it a save does not exist.
    config_files.write_durably(record_path, json.dumps(record, sort_keys=True).encode(), 0o600)
    return "saved"


def same_as_original(path, record, data):
    target = path if not os.path.lexists(path) else config_files.target_of(path)
    if not record["exists"]:
        return not os.path.lexists(path)
    if not os.path.exists(target):
        return False
    status = os.stat(target)
    return (config_files.read(target) == data and stat.S_IMODE(status.st_mode) == record["mode"]
            and (status.st_uid, status.st_gid) == (record["uid"], record["gid"]))


def restore_original(path, state, keep_current=False):
    """Put the saved original back (content, owner, mode): none, same, restored or removed."""
    saved = load_original(path, state)
    if saved is None:
        return "none"
    record, data = saved
    if same_as_original(path, record, data):
        return "same"
    if not record["exists"]:
        os.unlink(path)
        return "removed"
    target = config_files.target_of(path) if os.path.lexists(path) else path
    if keep_current and os.path.exists(target):
        config_files.backup(path, config_files.read(target), os.stat(target))
    config_files.write_durably(target, data, record["mode"], (record["uid"], record["gid"]))
    return "restored"


def forget_original(path, state):
    """Drop the saved original: its record first, so a half-done forget reads as no save at all."""
    data_path, record_path = journal(path, state)
    for name in (record_path, data_path):
        if os.path.lexists(name):
            os.unlink(name)
    if os.path.isdir(os.path.dirname(record_path)):
        config_files.fsync_directory(os.path.dirname(record_path))
    return "forgotten"


def forget_if_unchanged(path, state):
    """Drop the saved original when PATH is exactly it: nothing is left to recover."""
    saved = load_original(path, state)
    if saved is None or same_as_original(path, *saved):
        return forget_original(path, state)
    return "kept"


COMMANDS = {
    "save": lambda args: save_original(args[0], args[1]),
    "restore": lambda args: restore_original(args[0], args[1]),
    "recover": lambda args: restore_original(args[0], args[1], keep_current=True),
    "forget": lambda args: forget_original(args[0], args[1]),
    "forget-if-unchanged": lambda args: forget_if_unchanged(args[0], args[1]),
}


def main(argv):
    """originals COMMAND CONFIG STATE_DIR: one word on stdout, or why not on stderr and exit 3."""
    try:
        print(COMMANDS[argv[0]](argv[1:]))
    except config_files.Refused as refused:
        print(refused, file=sys.stderr)
        return 3
    except OSError as err:
        print(config_files.why(err, err.filename or argv[1]), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
