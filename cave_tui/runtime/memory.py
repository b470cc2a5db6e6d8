"""This process's memory: what it uses now (cheap), and the in-process limit `"auto"` means.

`process_rss()` reads `/proc/self/statm` (about 20 µs; psutil elsewhere), so a watchdog or a
status line may call it many times a second. `resolve_memory_limit` turns the setting an
`IPythonRuntime` takes (`"auto"`, `"4G"`, bytes, None) into bytes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from cave_tui.runtime.shipped.summary import library_attribute, sizeof_without_user_code

AUTO_SHARE_OF_RAM = 0.8  # "auto": at most this share of the machine's memory
MemoryLimitSetting = int | str | None  # bytes, "500M"/"4G", "auto", or None (no limit)
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# cgroup memory limits of this process's container (v2, then v1); "max" or a huge number: none.
_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)


@dataclass(frozen=True)
class MemoryUse:
    """A runtime's memory now: bytes in use, and its limit (None: no limit)."""

    used: int
    limit: int | None

    def describe(self) -> str:
        """e.g. `129 MiB of 12.0 GiB`, or `1.2 GiB` without a limit."""
        used = format_bytes(self.used)
        return f"{used} of {format_bytes(self.limit)}" if self.limit else used

    @property
    def fraction(self) -> float | None:
        """`used` as a share of `limit` (None without a limit)."""
        return self.used / self.limit if self.limit else None


def process_rss(pid: int | None = None) -> int:
    """Resident memory in bytes of this process, or of process *pid* (a kernel's)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return int(psutil.Process(pid).memory_info().rss)


def machine_memory() -> int:
    """Memory this process may use at most: the RAM, or its container's cgroup limit if lower."""
    total = int(psutil.virtual_memory().total)
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < total:
            total = int(text)
    return total


def auto_memory_limit() -> int:
    """The limit `"auto"` stands for: min(80% of the machine's memory, RSS + available).

    80% leaves the rest of the machine (and the app's own growth) room before the operating
    system's OOM killer acts; RSS + available caps it where other processes already hold
    memory. Computed once, when the runtime is made.
    """
    available = int(psutil.virtual_memory().available)
    return int(min(AUTO_SHARE_OF_RAM * machine_memory(), process_rss() + available))


def resolve_memory_limit(value: MemoryLimitSetting) -> int | None:
    """Bytes for a setting: `"auto"` (see `auto_memory_limit`), `"4G"`/`"500M"`, an int, None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"memory_limit={value!r}: give bytes > 0, a size like '4G', or 'auto'")
    if isinstance(value, str) and value.strip().lower() == "auto":
        return auto_memory_limit()
    try:
        size = parse_size(value)
    except ValueError:
        size = None
    if size is None or size <= 0:
        raise ValueError(f"memory_limit={value!r}: give bytes > 0, a size like '4G', or 'auto'")
    return size


def parse_size(value: int | str | None) -> int | None:
    """`"500M"`, `"2G"`, `"512MB"`, `"4GiB"` or bytes as an int (None stays None); ValueError
    for anything else."""
    if value is None or isinstance(value, int):
        return value
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    try:
        if text and text[-1] in _UNITS:
            return int(float(text[:-1]) * _UNITS[text[-1]])
        return int(text)
    except ValueError:
        raise ValueError(f"not a size: {value!r} (bytes, or a size like '500M' or '4G')") from None


def format_bytes(size: float) -> str:
    """`7.9 GiB`, `150 MiB`, `12 KiB`: one decimal from GiB up."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(size) >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if unit == "GiB" else f"{value:.0f} {unit}"
    return f"{size:.0f} B"


def not_enough_memory_text(place: str, needs: int, limit: int) -> str:
    """`not enough memory in the kernel: needs 1.1 GiB, limit 600 MiB` (*needs* at or under
    *limit*, when only the failure is known: `needs over 600 MiB`)."""
    shown = format_bytes(needs) if needs > limit else f"over {format_bytes(limit)}"
    return f"not enough memory in {place}: needs {shown}, limit {format_bytes(limit)}"


def rough_size(obj: Any, sample: int = 64) -> int:
    """Bytes *obj* holds, estimated cheaply: frames and arrays by their buffers, containers
    by a sample of their first *sample* items (their own size, not deeper)."""
    try:
        kind = type(obj)  # only the libraries' own attributes are read: a model-made class
        if library_attribute(kind, "nbytes"):  # may define any of them, never returning
            return int(obj.nbytes)
        if library_attribute(kind, "memory_usage"):
            usage = obj.memory_usage(index=True, deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        size = sizeof_without_user_code(obj)
        if any(kind is known for known in (list, tuple, set, frozenset, dict)) and obj:
            items = list(obj.values() if kind is dict else obj)[:sample]
            each = sum(sizeof_without_user_code(item) for item in items) / len(items)
            size += int(each * len(obj))
        return size
    except Exception:  # a model-made object whose size cannot be told
        return 0


def malloc_trim() -> bool:
    """Ask glibc to give freed heap memory back to the OS (False where there is no glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return False
    return True
