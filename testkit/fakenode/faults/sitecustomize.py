"""Disk faults for the node's python3, without mounts: loaded through PYTHONPATH by the fake node's python3 wrapper.

Knobs (files under fake/knobs/ of the sandbox, a path prefix relative to the sandbox root, e.g. `etc/docker`;
empty for everywhere):
- `disk-full`: a write to a file under the prefix writes a few bytes, then fails with ENOSPC, as a full
  file system does;
- `read-only`: opening a file under the prefix for writing fails with EROFS.
The node's scripts write configs, backups and saved originals through os.open and os.write, which this wraps.
"""
import errno
import os

_ROOT = os.environ.get("ASCEND_ROOT", "")


def _prefix(name):
    path = os.path.join(_ROOT, "fake/knobs", name)
    if not _ROOT or not os.path.exists(path):
        return None
    with open(path) as f:
        return os.path.join(_ROOT, f.read().strip()).rstrip("/") + "/"


def _under(path, prefix):
    return prefix is not None and os.path.abspath(path).startswith(prefix)


_full, _read_only = _prefix("disk-full"), _prefix("read-only")
if _full is not None or _read_only is not None:
    _real_open, _real_write = os.open, os.write
    _written = {}

    def _open(path, flags, mode=0o777, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and _under(os.fspath(path), _read_only):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return _real_open(path, flags, mode, *args, **kwargs)

    def _write(fd, data):
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            target = ""
        if _under(target, _full):
            done = _written.get(fd, 0)
            if done >= 8:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            _written[fd] = done + min(len(data), 8 - done)
            return _real_write(fd, bytes(data)[:8 - done])
        return _real_write(fd, data)

    os.open, os.write = _open, _write
