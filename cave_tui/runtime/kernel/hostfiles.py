"""The files the host writes for an owned kernel, laid out so the kernel cannot redirect them.

The kernel's private directory (`RunDirs.base`) belongs to the host: the kernel may enter it
but not change it. Inside, `host/` (0700, the host's only) holds the launcher's log and
`conn/` the connection files, each created anew with O_EXCL|O_NOFOLLOW through a directory
fd and handed to the kernel's user with fchown (never chown through a path), so a symlink
the kernel plants is refused, never followed. Only `home/`, `tmp/`, `run/` (its sockets)
and `work/` are the kernel's own.

The host never connects through `run/`: there the kernel could swap a socket for a symlink
to any Unix socket of the host, and ZMQ (re)connects through it. Once the kernel has bound
its sockets, `pin_sockets` hard-links each into `host/sock/` (checked to be a socket of the
kernel's user) and the host connects to those links, which the kernel cannot change.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Any

from cave_tui.runtime.kernel.limits import KernelUser

KERNEL_DIRS = ("home", "tmp", "run", "work")  # the kernel's user owns these
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class RunDirs:
    """One owned kernel's private directory and its parts."""

    base: str

    def sub(self, name: str) -> str:
        return os.path.join(self.base, name)

    @property
    def host(self) -> str:
        return self.sub("host")

    @property
    def conn(self) -> str:
        return self.sub("conn")

    @property
    def log(self) -> str:
        return os.path.join(self.host, "launcher.log")

    @property
    def sockets(self) -> str:
        """The host's hard links to the kernel's sockets (what it connects to)."""
        return os.path.join(self.host, "sock")


def make_run_dirs(user: KernelUser | None) -> RunDirs:
    """A fresh private directory: host-owned (0711 when the kernel runs as another user, so it
    can reach its own parts but not list or change the host's), with the kernel's parts
    handed to *user* through directory fds."""
    dirs = RunDirs(tempfile.mkdtemp(prefix="cave-kernel-"))
    os.mkdir(dirs.host, 0o700)
    os.mkdir(dirs.sockets, 0o700)
    os.mkdir(dirs.conn, 0o711 if user is not None else 0o700)
    for name in KERNEL_DIRS:
        os.mkdir(dirs.sub(name), 0o700)
        if user is not None:
            fd = os.open(dirs.sub(name), _DIR)
            try:
                os.fchown(fd, user.uid, user.gid)
            finally:
                os.close(fd)
    if user is not None:
        os.chmod(dirs.base, 0o711)
    return dirs


def write_new(
    directory: str, name: str, data: bytes, owner: KernelUser | None = None, mode: int = 0o400
) -> str:
    """Create *directory*/*name* (replacing what the host wrote there before) and write *data*;
    OSError when *directory* or *name* is a symlink. *owner* gets the file by fchown."""
    dir_fd = os.open(directory, _DIR)
    try:
        try:
            if os.path.islink(os.path.join(directory, name)):
                raise OSError(f"refusing to write through a symlink: {directory}/{name}")
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        fd = os.open(name, _NEW, 0o600, dir_fd=dir_fd)
        try:
            os.write(fd, data)
            if owner is not None:
                os.fchown(fd, owner.uid, owner.gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)
    return os.path.join(directory, name)


def write_connection(
    dirs: RunDirs, boot: int, info: dict[str, Any], owner: KernelUser | None
) -> str:
    """The connection file for boot *boot*, readable by the kernel's user only."""
    data = json.dumps(info, indent=1).encode()
    return write_new(dirs.conn, f"kernel-{boot}.json", data, owner)


def open_log(path: str) -> int:
    """The launcher log opened for appending (never through a symlink)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)


def read_tail(path: str, size: int = 4000) -> str:
    """The last *size* characters of the launcher log ('' if it cannot be read safely)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode(errors="replace")[-size:]


def pin_sockets(dirs: RunDirs, prefix: str, ports: list[int], owner_uid: int) -> str | None:
    """Hard-link each socket `run/<prefix>-<port>` into `host/sock/`; the host-side prefix to
    connect to once all are there, None while some are not (yet) sockets of *owner_uid*, the
    kernel's user. Each link is checked after it is made, so a swap in between is caught (and
    a symlink planted there before the kernel binds is replaced by its bind)."""
    run_fd = os.open(dirs.sub("run"), _DIR)
    sock_fd = os.open(dirs.sockets, _DIR)
    try:
        names = [f"{prefix}-{port}" for port in ports]
        pinned = _pin_all(run_fd, sock_fd, names, owner_uid)
    finally:
        os.close(run_fd)
        os.close(sock_fd)
    return os.path.join(dirs.sockets, prefix) if pinned else None


def _pin_all(run_fd: int, sock_fd: int, names: list[str], owner_uid: int) -> bool:
    for name in names:
        if not _is_socket_of(name, sock_fd, owner_uid):
            if not _is_socket_of(name, run_fd, owner_uid):
                return False
            try:
                os.link(name, name, src_dir_fd=run_fd, dst_dir_fd=sock_fd, follow_symlinks=False)
            except FileNotFoundError:  # gone again
                return False
            if not _is_socket_of(name, sock_fd, owner_uid):  # swapped in between
                os.unlink(name, dir_fd=sock_fd)
                return False
    return True


def _is_socket_of(name: str, dir_fd: int, uid: int) -> bool:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == uid
