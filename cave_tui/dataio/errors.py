"""Errors of data in and out. Every message names the file (or name) and the problem."""

from __future__ import annotations

import errno
from pathlib import Path


class DataIOError(Exception):
    """A file could not be loaded or saved; nothing was changed or lost."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        super().__init__(message)
        self.path = Path(path) if path is not None else None


class InvalidNameError(DataIOError):
    """The name cannot be bound: not an identifier, or a Python keyword."""


class NameConflictError(DataIOError):
    """The name would shadow a builtin or an existing variable: the caller may ask, then retry.

    `kind` is "builtin" or "variable". Retry with `allow_shadow=True` once confirmed.
    """

    def __init__(self, message: str, *, name: str, kind: str) -> None:
        super().__init__(message)
        self.name = name
        self.kind = kind


class LiveObjectError(DataIOError):
    """*name* holds a live object (a connection, an open file, a lock, a native handle) that
    cannot be copied into an isolated runtime; nothing was injected. *reason* says why."""

    def __init__(self, message: str, *, name: str, type_name: str, reason: str) -> None:
        super().__init__(message)
        self.name = name
        self.type_name = type_name
        self.reason = reason


class TrustRequiredError(DataIOError):
    """Loading this file would run code from it (pickle, dill): retry with `trust=True`."""


class LoadCancelled(DataIOError):
    """The load was cancelled by the user; nothing was injected."""


class FileExistsConflict(DataIOError):
    """The target file exists: the caller may ask, then retry with `overwrite=True`."""


def describe_os_error(exc: OSError, action: str, path: str | Path) -> str:
    """A readable message for an OSError raised while *action* ("write", "read") on *path*."""
    path = Path(path)
    code = exc.errno
    if code == errno.ENOSPC or code == errno.EDQUOT:
        return (
            f"cannot {action} {path}: the disk is full (no space left on the device); "
            "nothing was replaced"
        )
    if code == errno.EFBIG:
        return f"cannot {action} {path}: the file is too large for this file system or limit"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        where = path.parent if action == "write" else path
        return f"cannot {action} {path}: permission denied ({where} is read-only or not yours)"
    if code == errno.ENOENT:
        if action != "write" or not path.parent.is_dir():
            missing = path if action != "write" else path.parent
            kind = "folder" if action == "write" else "file or folder"
            return f"cannot {action} {path}: the {kind} {missing} does not exist"
        # The folder is there but refuses new files (/proc, /sys, a vanished mount).
        return (
            f"cannot {action} {path}: {path.parent} does not take new files "
            "(a special or virtual file system); choose another folder"
        )
    if code == errno.EISDIR:
        return f"cannot {action} {path}: it is a directory"
    reason = exc.strerror or str(exc)
    return f"cannot {action} {path}: {reason}"


class NotEnoughMemoryError(DataIOError):
    """The runtime's memory limit cannot hold the data (sized before it was loaded or sent):
    `needs` and `limit` in bytes; nothing was loaded."""

    def __init__(self, message: str, *, needs: int, limit: int) -> None:
        super().__init__(message)
        self.needs = needs
        self.limit = limit
