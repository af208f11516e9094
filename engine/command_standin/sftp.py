"""Stand-in for pulumi-command: a small SFTP v3 client, and CopyToRemote's copy rules from v1.2.1 copyController.go."""
# Reproduces pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/remote/copyController.go (copyToRemote,
# copyTextContent, sftpCopy, copyDir, copyFile) and the github.com/pkg/sftp calls it makes.
from __future__ import annotations

import io
import os
import posixpath
import stat
import struct
from typing import BinaryIO

INIT, VERSION, OPEN, CLOSE, WRITE, MKDIR, STAT, STATUS, HANDLE, ATTRS = 1, 2, 3, 4, 6, 14, 17, 101, 102, 105
READ_WRITE_CREATE_TRUNCATE = 0x01 | 0x02 | 0x08 | 0x10  # pkg/sftp Create: os.O_RDWR|os.O_CREATE|os.O_TRUNC
NO_SUCH_FILE, PERMISSION_DENIED = 2, 3
CODES = ["SSH_FX_OK", "SSH_FX_EOF", "SSH_FX_NO_SUCH_FILE", "SSH_FX_PERMISSION_DENIED", "SSH_FX_FAILURE",
         "SSH_FX_BAD_MESSAGE", "SSH_FX_NO_CONNECTION", "SSH_FX_CONNECTION_LOST", "SSH_FX_OP_UNSUPPORTED"]
CHUNK, IN_FLIGHT = 32768, 64  # pkg/sftp's default packet size; writes pipelined as UseConcurrentWrites does


class SFTPError(Exception):
    """A failed SFTP request, with its status code."""

    def __init__(self, code: int, text: str):
        super().__init__(text)
        self.code = code


def status_error(code: int, message: str) -> SFTPError:
    """An SFTP status, worded as github.com/pkg/sftp's normaliseError words it."""
    if code == NO_SUCH_FILE:
        return SFTPError(code, "file does not exist")
    if code == PERMISSION_DENIED:
        return SFTPError(code, "permission denied")
    return SFTPError(code, f'sftp: "{message}" ({CODES[code] if code < len(CODES) else code})')


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class Client:
    """The client side of `ssh -s HOST sftp`, on the process's stdin and stdout."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO):
        self.reader, self.writer, self.next_id = reader, writer, 0
        self._send(INIT, struct.pack(">I", 3))
        kind, _ = self._receive()
        if kind != VERSION:
            raise status_error(5, "no SFTP version packet")

    def _send(self, kind: int, payload: bytes) -> None:
        self.writer.write(struct.pack(">IB", len(payload) + 1, kind) + payload)
        self.writer.flush()

    def _read(self, size: int) -> bytes:
        data = self.reader.read(size)
        if len(data) != size:
            raise status_error(7, "connection lost")
        return data

    def _receive(self) -> tuple[int, bytes]:
        (size,) = struct.unpack(">I", self._read(4))
        body = self._read(size)
        return body[0], body[1:]

    def _request(self, kind: int, payload: bytes) -> int:
        self.next_id += 1
        self._send(kind, struct.pack(">I", self.next_id) + payload)
        return self.next_id

    def _reply(self) -> tuple[int, bytes]:
        kind, data = self._receive()
        if kind == STATUS:
            (code,) = struct.unpack(">I", data[4:8])
            if code != 0:
                (size,) = struct.unpack(">I", data[8:12])
                raise status_error(code, data[12:12 + size].decode(errors="replace"))
        return kind, data[4:]

    def stat(self, path: str) -> int | None:
        """The remote mode, or None when nothing is there (remoteStat)."""
        self._request(STAT, _string(path.encode()))
        try:
            kind, data = self._reply()
        except SFTPError as err:
            if err.code == NO_SUCH_FILE:
                return None
            raise SFTPError(err.code, f"failed to stat remote path {path}: {err}") from None
        (flags,) = struct.unpack(">I", data[:4])
        offset = 4 + (8 if flags & 0x1 else 0) + (8 if flags & 0x2 else 0)
        return struct.unpack(">I", data[offset:offset + 4])[0] if flags & 0x4 else 0

    def is_dir(self, path: str) -> bool | None:
        mode = self.stat(path)
        return None if mode is None else stat.S_ISDIR(mode)

    def mkdir(self, path: str) -> None:
        self._request(MKDIR, _string(path.encode()) + struct.pack(">I", 0))  # no attributes: the server's mode
        self._reply()

    def mkdir_all(self, path: str) -> None:
        """pkg/sftp Client.MkdirAll."""
        found = self.is_dir(path)
        if found is not None:
            if not found:
                raise OSError(f"mkdir {path}: not a directory")
            return
        parent = posixpath.dirname(path.rstrip("/"))
        if parent not in ("", "/"):
            self.mkdir_all(parent)
        try:
            self.mkdir(path)
        except SFTPError:
            if not self.is_dir(path):
                raise

    def write_file(self, source: BinaryIO, path: str) -> None:
        """sftp.Create (truncating, no attributes: modes are not carried over) then ReadFrom."""
        self._request(OPEN, _string(path.encode()) + struct.pack(">II", READ_WRITE_CREATE_TRUNCATE, 0))
        try:
            _, data = self._reply()
        except SFTPError as err:
            raise SFTPError(err.code, f"failed to create remote file {path}: {err}") from None
        handle = data[4:4 + struct.unpack(">I", data[:4])[0]]
        offset, waiting, failure = 0, 0, None
        while chunk := source.read(CHUNK):
            self._request(WRITE, _string(handle) + struct.pack(">Q", offset) + _string(chunk))
            offset, waiting = offset + len(chunk), waiting + 1
            if waiting >= IN_FLIGHT:
                failure, waiting = failure or self._status(), waiting - 1
        for _ in range(waiting):
            failure = failure or self._status()
        self._request(CLOSE, _string(handle))
        self._reply()
        if failure:
            raise SFTPError(failure.code, f"failed to copy file to remote path {path}: {failure}")

    def _status(self) -> SFTPError | None:
        try:
            self._reply()
        except SFTPError as err:
            return err
        return None


def copy(client: Client, source: dict, remote_path: str) -> None:
    """copyToRemote: a text asset written to a file path, else sftpCopy of the asset's or archive's local path."""
    if "text" in source:
        if client.is_dir(remote_path):
            raise OSError(f"remote path {remote_path} is a directory; when using a text asset, "
                          "remotePath must be a file path")
        client.mkdir_all(posixpath.dirname(remote_path) or ".")
        client.write_file(io.BytesIO(source["text"].encode()), remote_path)
    else:
        sftp_copy(client, source["path"], remote_path)


def sftp_copy(client: Client, source: str, dest: str) -> None:
    """sftpCopy: `dir` goes to dest/dir and `dir/` into dest (made when missing); a file into a directory dest."""
    if os.path.isdir(source):
        found = client.is_dir(dest)
        if found is None:
            wrap(client.mkdir_all, dest, f"failed to create remote directory {dest}")
        if not source.endswith("/"):
            dest = posixpath.normpath(posixpath.join(dest, os.path.basename(source)))
            found = client.is_dir(dest)
            if found is False:
                raise OSError(f"remote path {dest} exists but is not a directory")
            if found is None:
                wrap(client.mkdir, dest, f"failed to create remote directory {dest}")
        copy_dir(client, source, dest)
        return
    found = client.is_dir(dest)
    if found:
        dest = posixpath.normpath(posixpath.join(dest, os.path.basename(source)))
    elif found is None:
        wrap(client.mkdir_all, posixpath.dirname(dest) or ".", f"failed to create parent directories for {dest}")
    with open(source, "rb") as f:
        client.write_file(f, dest)


def copy_dir(client: Client, source: str, dest: str) -> None:
    """copyDir: fs.WalkDir order (lexical, depth first); directories made when missing, files rewritten."""
    found = client.is_dir(dest)
    if found is None:
        wrap(client.mkdir, dest, f"failed to create remote directory {dest}")
    elif not found:
        raise OSError(f"remote path {dest} exists but is not a directory")
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        target = posixpath.join(dest, entry.name)
        if entry.is_dir(follow_symlinks=False):
            copy_dir(client, entry.path, target)
        else:
            with open(entry.path, "rb") as f:
                client.write_file(f, target)


def wrap(action, path: str, context: str) -> None:
    try:
        action(path)
    except (SFTPError, OSError) as err:
        raise OSError(f"{context}: {err}") from None
