"""Putting a complete dump in place on any folder, and cleaning up after killed dumps.

A dump is written into a hidden staging folder, then put in place:

- beside the target (`.NAME.dump-XXXXXXXX.tmp`): swapped with it atomically
  (`renameat2(RENAME_EXCHANGE)`), or with two renames that `resolve_dump_dir` recovers
  from where the kernel has no exchange;
- inside the target (`TARGET/.cave-dump-XXXXXXXX.tmp`) when it cannot be swapped: a mount
  point (a tmpfs, a Docker volume: renaming it fails with EBUSY), or a folder whose parent
  cannot be written. The files move into the target under names the previous dump does not
  use, the manifest (replaced atomically) is the commit point, and the previous dump's files
  are removed after it. A swap beside that fails with EBUSY or EXDEV commits this way too,
  and so does a dump into a folder that holds files its previous dump did not list (a user's).

Only what the previous manifest listed is ever removed from the target (`listed`): a swap is
used only when the target holds nothing else, and the old folder it sets aside is emptied
of those files alone. A commit inside records the files it moves in and those it will remove
in a journal first, so that a dump killed mid-commit is cleaned up by the next one.
`DumpLock` keeps two processes from dumping into one folder at once.

A staging folder is locked (`flock`, released by the kernel when its process dies, even on
`kill -9`) and holds a marker until it is committed: `remove_stale` removes the folders of
dumps whose writer is gone, never one still being written.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import stat
import uuid
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from cave_tui.dataio.atomic import TEMP_SUFFIX, atomic_write_text, fsync_path

MANIFEST = "manifest.json"
MARKER = ".cave-staging"  # in a staging folder until the dump is committed
JOURNAL = ".cave-journal"  # in a staging folder committing inside: the files it moves and removes
INSIDE_PREFIX = ".cave-dump-"
INSIDE_LOCK = ".cave-dump.lock"  # the lock file, inside a target whose parent cannot take it
MOUNT_FURNITURE = frozenset({"lost+found"})  # what a fresh file system holds at its root
_REFUSED = (errno.EACCES, errno.EPERM, errno.EROFS)
_NOT_SWAPPABLE = (errno.EBUSY, errno.EXDEV)
_INSIDE_NAME = re.compile(rf"^{re.escape(INSIDE_PREFIX)}[0-9a-f]{{8}}\.tmp$")


def _beside_name(target: Path) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(target.name)}\.(dump|old)-[0-9a-f]{{8}}\.tmp$")


def is_staging_folder(path: Path) -> bool:
    """True for a staging folder a dump makes inside its target."""
    return bool(_INSIDE_NAME.match(path.name))


def is_dump_machinery(name: str) -> bool:
    """True for an entry a dump itself leaves in its target: a staging folder, the lock
    file, a temporary manifest of an interrupted atomic write."""
    return (
        bool(_INSIDE_NAME.match(name))
        or name == INSIDE_LOCK
        or (name.startswith(f".{MANIFEST}.") and name.endswith(TEMP_SUFFIX))
    )


def is_mount_point(path: Path) -> bool:
    """True if *path* is the root of a mounted file system (bind mounts included)."""
    if os.path.ismount(path):
        return True
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                fields = line.split(" ")
                if len(fields) > 4 and _unescape(fields[4]) == real:
                    return True
    except OSError:
        pass
    return False


def _unescape(text: str) -> str:
    """mountinfo writes a space, tab, newline or backslash in a path as an octal escape."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def disk_full(path: Path) -> bool:
    """True if the file system holding *path* has (almost) no space left for us."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        stats = os.statvfs(probe)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


class Staging:
    """The hidden folder one dump is written into, locked while its writer lives."""

    def __init__(self, target: Path, path: Path, inside: bool) -> None:
        self.target = target
        self.path = path
        self.inside = inside  # staged inside the target: committed by the manifest
        self._fd: int | None = None

    @classmethod
    def create(cls, target: Path) -> Staging:
        """A new locked staging folder for a dump into *target* (beside it when possible)."""
        tag = uuid.uuid4().hex[:8]
        inside = target.is_dir() and is_mount_point(target)
        path = target / f"{INSIDE_PREFIX}{tag}.tmp"
        if not inside:
            beside = target.with_name(f".{target.name}.dump-{tag}.tmp")
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                beside.mkdir()
                path = beside
            except OSError as exc:
                if exc.errno not in _REFUSED or not target.is_dir():
                    raise
                inside = True  # the parent refuses new folders; the target may not
        if inside:
            path.mkdir()
        staging = cls(target, path, inside)
        try:
            staging._lock()
        except BaseException:
            staging.discard()
            raise
        return staging

    def _lock(self) -> None:
        self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        with contextlib.suppress(ImportError):
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_EX)  # at most a cleaner looking in holds it
        (self.path / MARKER).write_text(f"{os.getpid()}\n", encoding="utf-8")

    def _release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """Remove the staging folder (the dump failed or was cancelled)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._release()

    def commit(
        self,
        entries: list[dict[str, Any]],
        manifest: Callable[[], str],
        *,
        sync: bool,
        listed: Collection[str] = (),
    ) -> None:
        """Put the staged dump in place. *entries* are the manifest's variables (a `file`
        may be renamed); *manifest* renders the manifest text from them; *listed* are the
        files of the previous dump in the target (its manifest lists them): the only ones
        removed. A target holding anything else keeps it (the dump commits inside)."""
        try:
            if self.inside or _holds_others(self.target, listed):
                self._commit_inside(entries, manifest, sync, listed)
                return
            atomic_write_text(self.path / MANIFEST, manifest(), sync=sync)
            (self.path / MARKER).unlink()
            if sync:
                fsync_path(self.path)
            try:
                _swap_into_place(self.path, self.target, listed)
            except OSError as exc:
                if exc.errno not in _NOT_SWAPPABLE:
                    raise
                (self.path / MARKER).write_text(f"{os.getpid()}\n", encoding="utf-8")
                (self.path / MANIFEST).unlink()
                self._commit_inside(entries, manifest, sync, listed)  # a mount point seen late
        finally:
            self._release()

    def _commit_inside(
        self,
        entries: list[dict[str, Any]],
        manifest: Callable[[], str],
        sync: bool,
        listed: Collection[str],
    ) -> None:
        taken = {p.name for p in self.target.iterdir()}
        moves = []
        for entry in entries:
            name = _free_name(entry["file"], taken)
            taken.add(name)
            moves.append((entry, name))
        new = {name for _, name in moves}
        old = sorted(set(listed) - new)
        journal = {"in": sorted(new), "out": old}  # what a cleaner removes if we die mid-way
        atomic_write_text(self.path / JOURNAL, json.dumps(journal), sync=sync)
        for entry, name in moves:
            shutil.move(self.path / entry["file"], self.target / name)  # a copy across mounts
            if sync:
                fsync_path(self.target / name)
            entry["file"] = name
        if sync:
            fsync_path(self.target)
        atomic_write_text(self.target / MANIFEST, manifest(), sync=sync)  # the commit point
        for name in old:  # the previous dump's files; nothing it did not list
            _unlink_file(self.target / name)
        shutil.rmtree(self.path, ignore_errors=True)


def _free_name(name: str, taken: set[str]) -> str:
    """*name*, or `stem.N.ext` when the previous dump still uses it."""
    if name not in taken:
        return name
    path = Path(name)
    n = 2
    while f"{path.stem}.{n}{path.suffix}" in taken:
        n += 1
    return f"{path.stem}.{n}{path.suffix}"


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _unlink_file(path: Path) -> None:
    """Remove *path* if it is a regular file (never a folder, a link's target, a FIFO)."""
    with contextlib.suppress(OSError):
        if path.is_file() and not path.is_symlink():
            path.unlink()


def _holds_others(target: Path, listed: Collection[str]) -> bool:
    """True if *target* holds an entry that is neither the previous dump's nor a dump's own."""
    try:
        names = os.listdir(target)
    except FileNotFoundError:
        return False
    ours = set(listed) | {MANIFEST}
    return any(n not in ours and not is_dump_machinery(n) for n in names)


def _discard_old(old: Path, target: Path, listed: Collection[str]) -> None:
    """Empty *old* (the previous dump, set aside by a swap) of what its manifest listed and
    remove it; anything else found there (a file added meanwhile) goes back into *target*."""
    for name in [*listed, MANIFEST]:
        _unlink_file(old / name)
    with contextlib.suppress(OSError):
        for entry in old.iterdir():
            if is_dump_machinery(entry.name):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    _unlink_file(entry)
            elif not os.path.lexists(target / entry.name):
                os.rename(entry, target / entry.name)
    with contextlib.suppress(OSError):
        old.rmdir()


def _swap_into_place(staging: Path, target: Path, listed: Collection[str]) -> None:
    if not target.exists():
        os.rename(staging, target)
    elif _exchange(staging, target):
        _discard_old(staging, target, listed)  # now holds the previous dump
    else:
        old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}.tmp")
        os.rename(target, old)
        os.rename(staging, target)
        _discard_old(old, target, listed)
    fsync_path(target.parent)


def remove_stale(target: Path) -> list[Path]:
    """Remove the staging folders of dumps into *target* whose writer is gone.

    A folder still locked by its writer is left alone; one left by a finished swap (a
    complete copy beside a target that has its own manifest) is removed too. Returns
    what was removed; a folder that cannot be examined or removed is left as it is.
    """
    found: list[Path] = []
    with contextlib.suppress(OSError):
        pattern = _beside_name(target)
        found += [p for p in target.parent.iterdir() if pattern.match(p.name) and p.is_dir()]
    with contextlib.suppress(OSError):
        if target.is_dir():
            found += [p for p in target.iterdir() if is_staging_folder(p) and p.is_dir()]
    complete = (target / MANIFEST).is_file()
    return [folder for folder in found if _remove_if_stale(folder, target, complete)]


def _undo_journal(folder: Path, target: Path) -> None:
    """Remove from *target* what a commit inside, killed mid-way, moved in or was to remove,
    bar what the manifest in place now lists (the old one, or the new one if it got there)."""
    try:
        journal = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
        names = [str(n) for n in [*journal["in"], *journal["out"]]]
    except (OSError, ValueError, TypeError, KeyError):
        return
    current: set[str] = set()  # no manifest: the first dump into an empty folder
    try:
        if not stat.S_ISREG(os.lstat(target / MANIFEST).st_mode):
            return  # not a file cave wrote (a FIFO would block): remove nothing
        data = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
        current = {str(e["file"]) for e in data["variables"]}
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError, KeyError):
        return  # cannot tell what is in use: remove nothing
    for name in names:
        if name not in current and name == Path(name).name and name not in (MANIFEST, ""):
            _unlink_file(target / name)


def _remove_if_stale(folder: Path, target: Path, complete: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: cannot tell a running writer
        return False
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its writer is running
        stale = (folder / MARKER).exists() or (complete and (folder / MANIFEST).exists())
        if stale:
            _undo_journal(folder, target)
            shutil.rmtree(folder, ignore_errors=True)
        return stale and not folder.exists()
    finally:
        os.close(fd)
