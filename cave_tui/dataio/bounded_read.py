"""Opening cave's own files (manifests, session logs, metadata, snapshot files) safely.

`open_regular` opens a path without following a symbolic link in its last part and without
blocking (a FIFO, a device), then checks through the descriptor that it is a regular file;
`read_regular` also refuses a file over a size limit before reading it, so a FIFO never
hangs a read and a link to `/dev/zero` never fills the memory. Refusals are `UnsafeFileError`,
an `OSError`, so callers that already handle unreadable files handle these too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MIB = 1 << 20
# The largest each of cave's own files may be (far above what cave writes).
MANIFEST_LIMIT = 64 * MIB  # a dump's manifest.json: ~350 bytes a variable
META_LIMIT = 16 * MIB  # a session's meta.json
EVENTS_LIMIT = 1024 * MIB  # a session's events.jsonl (each cell's output is bounded)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnsafeFileError(OSError):
    """A file cave reads for itself is a link, not a regular file, or over its size limit."""

    def __init__(self, code: int, reason: str, path: str | Path) -> None:
        super().__init__(code, reason, str(path))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """A descriptor of the regular file *path* (*flags* as for `os.open`, blocking mode
    restored); raises `UnsafeFileError` for a symbolic link or anything but a regular file,
    `FileNotFoundError` when it is missing."""
    try:
        fd = os.open(path, flags | NOFOLLOW | NONBLOCK | CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and os.path.islink(path)):
            reason = "is a symbolic link (cave does not follow links for its own files)"
            raise UnsafeFileError(errno.ELOOP, reason, path) from None
        if exc.errno == errno.ENXIO:  # opening a FIFO for writing with no reader
            raise UnsafeFileError(errno.ENXIO, "is a FIFO, not a regular file", path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = f"is {_kind(info.st_mode)}, not a regular file"
            raise UnsafeFileError(errno.EINVAL, reason, path)
        if NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_big(path: str | Path, size: int, limit: int) -> UnsafeFileError:
    reason = f"holds {size:,} bytes, over the {limit:,}-byte limit for this file"
    return UnsafeFileError(errno.EFBIG, reason, path)


def read_fd(fd: int, path: str | Path, limit: int) -> bytes:
    """Everything in the open regular file *fd* (from its start), at most *limit* bytes."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise _too_big(path, size, limit)
    parts: list[bytes] = []
    total, offset = 0, 0
    while chunk := os.pread(fd, min(MIB, limit + 1 - total), offset):
        parts.append(chunk)
        total += len(chunk)
        offset += len(chunk)
        if total > limit:  # it grew while being read
            raise _too_big(path, total, limit)
    return b"".join(parts)


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file *path*, refused (`UnsafeFileError`) when it is a link,
    not a regular file, or over *limit* bytes; `FileNotFoundError` when it is missing."""
    fd = open_regular(path)
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)
