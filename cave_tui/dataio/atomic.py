"""Crash-safe writes: write a temporary sibling, fsync it, then `os.replace` it into place.

A crash (or a full disk) mid-write leaves either the old file or the new one at the
target path, never a half-written file. Temporary names start with a dot and end in
`.tmp`, so listings and loaders ignore leftovers. A write holds an exclusive `flock` on its
temporary file until it is renamed, so `cleanup_temp_files` can tell the leftover of a
killed write (no lock: its writer is gone) from a write in progress in another process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import stat
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_-]*[0-9a-f]{12}\.tmp$")  # what temp_sibling makes
FRESH_SECONDS = 10.0  # a temporary file this new may not be locked yet: left alone


def temp_sibling(path: Path, tag: str = "") -> Path:
    """A fresh hidden name next to *path* (same folder, so the rename is atomic)."""
    return path.with_name(f".{path.name}.{tag}{uuid.uuid4().hex[:12]}{TEMP_SUFFIX}")


def fsync_path(path: Path) -> None:
    """Flush a file's data (or a folder's entries) to the disk."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if path.is_dir() else os.O_RDONLY
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError:
        if not path.is_dir():  # some file systems refuse fsync on folders; files must sync
            raise
    finally:
        os.close(fd)


SYNCFS_FROM = 16  # from this many files, one syncfs() beats an fsync() each


def fsync_many(paths: list[Path]) -> None:
    """Flush many files to the disk: one `syncfs` of their file system where Linux has
    it (a fsync each costs a journal commit each), else a fsync each."""
    if not paths:
        return
    if len(paths) >= SYNCFS_FROM and _syncfs(paths[0]):
        return
    for path in paths:
        fsync_path(path)


def _syncfs(path: Path) -> bool:
    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return bool(syncfs(fd) == 0)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, *, sync: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces *path* atomically.

    The temporary file is created (empty) before the yield, so an unwritable folder
    fails here with a plain `PermissionError` before any work is done.
    """
    target = Path(path)
    tmp = temp_sibling(target)
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    try:
        _lock(fd, blocking=True)  # held until the rename: the file is in use, not left over
        try:
            yield tmp
            if sync:
                fsync_path(tmp)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
    finally:
        os.close(fd)
    if sync:
        fsync_path(target.parent)


def _lock(fd: int, *, blocking: bool) -> bool:
    """Take an exclusive `flock` on *fd*; False when another holder has it (non-blocking)."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): every lock is granted
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks: a write in progress cannot be told apart
        return blocking
    return True


def atomic_write_bytes(path: str | Path, data: bytes, *, sync: bool = True) -> None:
    with atomic_path(path, sync=sync) as tmp, open(tmp, "wb") as f:
        f.write(data)


def atomic_write_text(path: str | Path, text: str, *, sync: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), sync=sync)


def cleanup_temp_files(folder: str | Path) -> list[Path]:
    """Remove the leftovers of killed atomic writes in *folder*; returns what was removed.

    Only regular files named as `temp_sibling` names them, older than FRESH_SECONDS and not
    locked: a write in progress (in any process) holds its lock, a killed one's died with it.
    """
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if _TEMP_NAME.match(e.name)]
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < FRESH_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if _lock(fd, blocking=False) and os.fstat(fd).st_ino == st.st_ino:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed
