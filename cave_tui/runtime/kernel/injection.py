"""What injecting an item sends: its checked encoding, and the comm request that binds it.

Shared by the supervisor (which re-injects into each new kernel) and the `exchange`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cave_tui.runtime.items import (
    Function,
    Injectable,
    LazyScan,
    ParquetFile,
    Pickled,
    Type,
    Variable,
    validate_name,
)
from cave_tui.runtime.kernel.errors import InjectionError, KernelOutOfMemory, NotTransferable
from cave_tui.runtime.memory import MemoryUse, format_bytes, not_enough_memory_text
from cave_tui.runtime.shipped.transport import TransferError, describe_type, encode_for_kernel

Payload = tuple[str, dict[str, Any], list[Any]]  # (codec, meta, buffers)
OUT_OF_MEMORY = "MemoryError"  # the kernel's error_type when its limit could not hold a value
INJECT_TIMEOUT = 120.0  # seconds the kernel may take to build any injected value, plus …
INJECT_RATE = 10 << 20  # … a second per this many bytes sent or read from a file


def payload_bytes(payload: Payload) -> int:
    """The bytes *payload* sends."""
    return sum(memoryview(b).nbytes for b in payload[2])


def needs_libraries(payload: Payload) -> bool:
    """The kernel builds *payload*'s value with pyarrow (and pandas)."""
    codec = payload[0]
    return codec.startswith(("arrow", "parquet")) or codec == "pickle.arrow"


def check_room(item: Injectable, payload: Payload, use: MemoryUse | None) -> None:
    """KernelOutOfMemory when the kernel (using *use*, see `needs_libraries`) cannot hold
    *payload* as it arrives and the value built from it (about twice its bytes), before a
    byte is sent."""
    if use is None or not use.limit:
        return
    size = payload_bytes(payload) * 2
    needs = use.used + size
    if needs > use.limit:
        raise KernelOutOfMemory(
            f"{not_enough_memory_text('the kernel', needs, use.limit)}; {item.name!r} takes "
            f"about {format_bytes(size)} once sent and built, and the kernel holds "
            f"{format_bytes(use.used)}. Nothing was sent",
            needs=needs,
            limit=use.limit,
        )


def check_room_many(
    items: list[Injectable],
    payloads: list[Payload],
    use_of: Callable[[bool], MemoryUse | None],
) -> list[KernelOutOfMemory | None]:
    """`check_room` of a message of several values, *use_of(needs_libraries)* giving the
    kernel's memory: each must fit beside the ones before it (per value None, or the
    refusal); nothing is sent for a refused one."""
    out: list[KernelOutOfMemory | None] = []
    uses: dict[bool, MemoryUse | None] = {}
    added = 0
    for item, payload in zip(items, payloads, strict=True):
        libraries = needs_libraries(payload)
        if libraries not in uses:
            uses[libraries] = use_of(libraries)
        use = uses[libraries]
        try:
            check_room(item, payload, use and MemoryUse(use.used + added, use.limit))
        except KernelOutOfMemory as exc:
            out.append(exc)
            continue
        out.append(None)
        added += payload_bytes(payload) * 2
    return out


def inject_timeout(payload: Payload) -> float:
    """Seconds to wait for the kernel to acknowledge *payload*: never for ever."""
    codec, meta, _ = payload
    size = payload_bytes(payload)
    if codec == "parquet.file":
        size += int(meta.get("size") or 0)
    return INJECT_TIMEOUT + size / INJECT_RATE


def encode_item(item: Injectable) -> Payload:
    """The bytes that copy *item* into the kernel; InjectionError when it cannot travel."""
    if not isinstance(item, Variable | Function | Type):
        raise TypeError(f"inject() takes a Variable, Function or Type, not {type(item).__name__}")
    validate_name(item.name)
    if isinstance(item, Variable) and isinstance(item.value, Pickled):
        return "dill", {}, [item.value.data]  # the kernel unpickles it; the host never does
    if isinstance(item, Variable) and isinstance(item.value, LazyScan):  # built in the kernel
        scan = item.value
        return "lazy.scan", {"path": scan.path, "format": scan.format, "engine": scan.engine}, []
    if isinstance(item, Variable) and isinstance(item.value, ParquetFile):
        parquet = item.value  # the kernel reads the file itself when it can (else: fallback)
        meta = {"path": parquet.path, "size": parquet.size, "mtime_ns": parquet.mtime_ns}
        return "parquet.file", meta, []
    try:
        return encode_for_kernel(item.value)
    except TransferError as exc:
        raise NotTransferable(
            f"cannot copy {item.name!r} ({describe_type(item.value)}) into the kernel: {exc}. "
            "The kernel runtime injects copies, and this object cannot be serialised "
            "(live handles such as connections, open files, locks and threads cannot). "
            "Options: inject what it needs to be recreated (a path, a URL, parameters) and "
            "a Function that opens it inside the kernel, or use IPythonRuntime, which "
            "shares live objects.",
            name=item.name,
            type_name=describe_type(item.value),
            reason=str(exc),
        ) from None


def fallback_payload(item: Injectable, payload: Payload) -> Payload | None:
    """What to send when the kernel could not take *payload* (a file it cannot see or read):
    the file's bytes, read by the host. None when there is no fallback; InjectionError when
    the file is no longer the one that was checked. Blocking: call it off the event loop."""
    if payload[0] != "parquet.file" or not isinstance(item, Variable):
        return None
    assert isinstance(item.value, ParquetFile)
    try:
        return "parquet", {}, [item.value.read_bytes()]
    except (OSError, ValueError) as exc:
        raise InjectionError(f"cannot inject {item.name!r}: {exc}") from None


def inject_request(item: Injectable, payload: Payload) -> dict[str, Any]:
    """The comm message that binds *item* in the kernel (its buffers travel beside it)."""
    codec, meta, _ = payload
    return {"name": item.name, "codec": codec, "meta": meta}
