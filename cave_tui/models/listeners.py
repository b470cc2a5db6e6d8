"""Which loopback ports a cave kernel listens on (Linux `/proc`; elsewhere none are known).

A kernel that runs in the host's network namespace (unsandboxed, or with `--allow-net`) can
listen on the host's loopback and pose as a local model server. `kernel_ports` finds the
listening socket of each port in `/proc/net/tcp{,6}`, the processes holding it
(`/proc/PID/fd`), and calls the port a kernel's when one of them descends from a cave kernel
launcher (every process a kernel starts does: the launcher is their subreaper, so even a
daemon the kernel double-forked stays below it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

# The kernel launcher's script (cave_tui/runtime/shipped/launcher.py), as its command line names it.
LAUNCHER_TAIL = os.path.join("cave_tui", "runtime", "shipped", "launcher.py")
LISTEN = "0A"  # TCP state in /proc/net/tcp
MAX_DEPTH = 256  # ancestors walked (a loop in a changing /proc ends here)


@dataclass(frozen=True)
class Listener:
    """One listening socket: its port, the uid that opened it and its inode."""

    port: int
    uid: int
    inode: int


def _loopback_or_any(address: str) -> bool:
    """A /proc/net/tcp{,6} address (hex) a connection to 127.0.0.1 or ::1 could reach."""
    if len(address) == 8:  # IPv4, little-endian
        first = int(address[6:8], 16)
        return address == "00000000" or first == 127
    words = [address[i : i + 8] for i in range(0, 32, 8)]
    if words == ["00000000"] * 4 or words == ["00000000"] * 3 + ["01000000"]:
        return True  # :: or ::1
    return words[:3] == ["00000000", "00000000", "FFFF0000"] and int(words[3][6:8], 16) == 127


def listeners(ports: Iterable[int], proc: str = "/proc") -> list[Listener]:
    """The listening sockets on *ports* that loopback reaches, from both tables."""
    wanted = set(ports)
    found: list[Listener] = []
    for table in ("tcp", "tcp6"):
        try:
            with open(os.path.join(proc, "net", table)) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != LISTEN:
                continue
            address, _, port_hex = fields[1].partition(":")
            try:
                port, uid, inode = int(port_hex, 16), int(fields[7]), int(fields[9])
            except ValueError:
                continue
            if port in wanted and _loopback_or_any(address):
                found.append(Listener(port, uid, inode))
    return found


def holders(inodes: set[int], proc: str = "/proc") -> dict[int, set[int]]:
    """inode -> the pids holding that socket open (those whose descriptors can be read)."""
    links = {f"socket:[{inode}]": inode for inode in inodes}
    found: dict[int, set[int]] = {}
    if not links:
        return found
    try:
        names = os.listdir(proc)
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        fd_dir = os.path.join(proc, name, "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target in links:
                found.setdefault(links[target], set()).add(int(name))
    return found


def _parent(pid: int, proc: str) -> int | None:
    try:
        with open(os.path.join(proc, str(pid), "stat")) as fh:
            stat = fh.read()
        return int(stat[stat.rfind(")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_launcher(pid: int, proc: str) -> bool:
    try:
        with open(os.path.join(proc, str(pid), "cmdline"), "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    tail = LAUNCHER_TAIL.encode()
    return any(arg == tail or arg.endswith(b"/" + tail) for arg in argv[:3])


def from_kernel(pid: int, proc: str = "/proc") -> bool:
    """True when *pid* or one of its ancestors is a cave kernel launcher."""
    current: int | None = pid
    for _ in range(MAX_DEPTH):
        if current is None or current <= 1:
            return False
        if _is_launcher(current, proc):
            return True
        current = _parent(current, proc)
    return False


def kernel_ports(ports: Iterable[int], proc: str = "/proc") -> set[int]:
    """The *ports* a cave kernel listens on (see the module docstring)."""
    found = listeners(ports, proc)
    held = holders({item.inode for item in found}, proc)
    owned: set[int] = set()
    for item in found:
        if any(from_kernel(pid, proc) for pid in held.get(item.inode, ())):
            owned.add(item.port)
    return owned
