"""One dump into a folder at a time: an advisory lock (`flock`) held while a dump is written.

The lock file sits beside the target (`.NAME.dump.lock`), or inside it when its parent
cannot take new files (`TARGET/.cave-dump.lock`); it holds the writer's process id. A
second dump into the same folder, from any process, waits at most `WAIT` seconds, then is
refused with a `DumpBusyError` naming that process: it never silently replaces the first
one's dump. The kernel releases the lock when its process dies (even on `kill -9`); the file
is removed when the dump ends, and one a killed dump left by the next dump or load.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from cave_tui.dataio.errors import DataIOError
from cave_tui.dataio.staging import INSIDE_LOCK

WAIT = 1.0  # seconds a second dump waits for the first before it is refused


class DumpBusyError(DataIOError):
    """Another process (`pid`, when known) is writing a dump into the same folder."""

    def __init__(self, message: str, *, path: Path, pid: int | None) -> None:
        super().__init__(message, path=path)
        self.pid = pid


def lock_path(target: Path) -> Path:
    """Where the lock of dumps into *target* is kept (the same for every process)."""
    beside = target.with_name(f".{target.name}.dump.lock")
    if os.access(target.parent, os.W_OK | os.X_OK) or not target.is_dir():
        return beside
    return target / INSIDE_LOCK


def _holder(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text(encoding="ascii").split()[0])
    return None


def _try_lock(path: Path) -> int | None:
    """A descriptor of *path* locked by us (the file that is at *path* now), or None if
    another holds the lock."""
    import fcntl

    for _ in range(5):  # the file may be removed by its holder between our open and lock
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            return None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)
    raise OSError(errno.EAGAIN, "the dump lock keeps changing", str(path))


@contextlib.contextmanager
def dump_lock(target: Path, wait: float = WAIT) -> Iterator[None]:
    """Hold the lock of dumps into *target* for the block; `DumpBusyError` if another holds
    it for *wait* seconds. `OSError` when the lock file cannot be made (nor could the dump)."""
    path = lock_path(target)
    if path.parent == target.parent:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    while (fd := _try_lock(path)) is None:
        if time.monotonic() >= deadline:
            pid = _holder(path)
            who = f"process {pid}" if pid is not None else "another process"
            raise DumpBusyError(
                f"cannot dump into {target}: {who} is writing a dump there now "
                f"(lock {path}); nothing was written: try again when it has finished",
                path=target,
                pid=pid,
            )
        time.sleep(0.05)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still held: the next one makes a fresh file
        os.close(fd)


def remove_stale_lock(target: Path) -> bool:
    """Remove the lock file a killed dump into *target* left (never one that is held)."""
    path = lock_path(target)
    if not path.is_file():
        return False
    try:
        fd = _try_lock(path)
    except OSError:
        return False
    if fd is None:
        return False
    try:
        path.unlink()
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


__all__ = ["DumpBusyError", "dump_lock", "lock_path", "remove_stale_lock"]
