"""Engine config files on the node: checked backups and atomic, durable writes through symbolic links.

Every write goes to a temp file next to its destination, is checked byte for byte, synced, renamed over the
destination and its directory synced, so a reader (or a crash) sees the old file or the new one, never half of one.
A failure says what could not be written and why (a full disk by name), and leaves the destination as it was.
"""
import errno
import hashlib
import os
import stat
import sys
import tempfile

ROOT = os.environ.get("ASCEND_ROOT", "")
TEMP_MARK = ".ascend-npu."


class Refused(Exception):
    """A write that did not happen; the message names the file, the reason and what to do."""


def shown(path):
    """PATH as the host sees it (without the test sandbox root)."""
    if ROOT and path.startswith(ROOT + "/"):
        return path[len(ROOT):]
    return path


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def why(err, path):
    """One line on a failed write of PATH (a temp file is named after the file it stands for)."""
    where, name = shown(os.path.dirname(path) or "/"), shown(path)
    if TEMP_MARK in os.path.basename(path):
        stands_for = os.path.basename(path).split(TEMP_MARK)[0].lstrip(".")
        name = "a new " + shown(os.path.join(os.path.dirname(path), stands_for))
    if err.errno == errno.ENOSPC:
        return "no space left on the device holding %s while writing %s; free some space there, then rerun" % (
            where, name)
    if err.errno == errno.EROFS:
        return "%s is on a read-only file system, %s cannot be written" % (where, name)
    if err.errno in (errno.EACCES, errno.EPERM):
        return "permission denied writing %s" % name
    return "cannot write %s (%s)" % (name, err.strerror or err)


def target_of(path):
    """The file PATH stands for: PATH itself, or the end of its chain of symbolic links."""
    if not os.path.islink(path):
        return path
    target = os.path.realpath(path)
    if not os.path.exists(target):
        raise Refused("%s is a symbolic link to %s, which does not exist; fix the link, then rerun; nothing was "
                      "changed" % (shown(path), shown(target)))
    return target


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_all(fd, data):
    """os.write until every byte is written: a short write is retried, a write of nothing is a full disk."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def fsync_directory(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path, data, mode=0o644, owner=None):
    """Give PATH the content DATA with one rename; owner (uid, gid) and mode set before it becomes visible."""
    directory = os.path.dirname(path)
    fd, temp = None, None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(path) + TEMP_MARK, dir=directory)
        write_all(fd, data)
        if owner is not None:
            os.fchown(fd, owner[0], owner[1])
        os.fchmod(fd, mode)
        os.fsync(fd)
        os.close(fd)
        fd = None
        os.rename(temp, path)
        temp = None
        fsync_directory(directory)
    except OSError as err:
        raise Refused(why(err, path)) from None
    finally:
        if fd is not None:
            os.close(fd)
        if temp is not None:
            os.unlink(temp)


def check_writable(path):
    """Refuse when PATH (or the file it links to) could not be replaced; nothing is left behind."""
    target = target_of(path)
    directory = os.path.dirname(target)
    while not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    try:
        fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(target) + TEMP_MARK, dir=directory)
        os.close(fd)
        os.unlink(temp)
    except OSError as err:
        reason = why(err, target)
        if target != path:
            reason = "%s is a symbolic link to %s, which cannot be written: %s" % (shown(path), shown(target), reason)
        raise Refused(reason + "; add the ascend runtime where that file is managed, or make it writable, then "
                               "rerun; nothing was changed") from None


def backup(path, data, status):
    """PATH.bak.<first 12 of sha256>, holding DATA: an existing one is trusted only when its bytes match."""
    name = "%s.bak.%s" % (path, sha256(data)[:12])
    if os.path.isfile(name) and not os.path.islink(name) and sha256(read(name)) == sha256(data):
        return name
    write_durably(name, data, stat.S_IMODE(status.st_mode), (status.st_uid, status.st_gid))
    return name


def replace(path, data):
    """Write DATA to PATH's target, keeping its owner and mode and a checked backup; the backup's name, or ''."""
    target = target_of(path)
    name = backup(path, read(target), os.stat(target)) if os.path.exists(target) else ""
    write(path, data)
    return name


def write(path, data):
    """Write DATA to PATH's target without a backup (files of our own), keeping owner and mode when it exists."""
    target = target_of(path)
    if not os.path.exists(target):
        write_durably(target, data)
    else:
        status = os.stat(target)
        write_durably(target, data, stat.S_IMODE(status.st_mode), (status.st_uid, status.st_gid))


COMMANDS = {
    "writable": lambda args: check_writable(args[0]) or "ok",
    "replace": lambda args: "backup=" + shown(replace(args[0], sys.stdin.buffer.read())),
    "write": lambda args: write(args[0], sys.stdin.buffer.read()) or "written",
}


def main(argv):
    """config_files COMMAND PATH [PATH]: one word on stdout, or why not on stderr and exit 3."""
    try:
        print(COMMANDS[argv[0]](argv[1:]))
    except Refused as refused:
        print(refused, file=sys.stderr)
        return 3
    except OSError as err:
        print(why(err, err.filename or argv[1]), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
